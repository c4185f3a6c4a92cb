/**
 * One closed set of error codes, mapped to HTTP status and MCP `isError` results in one place.
 *
 * HTTP body: `{ "error": { "code", "message", "details"? } }`. MCP: `isError: true` with the same
 * object as `structuredContent` and as JSON text.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  PAYMENT_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  UNKNOWN_SYMBOL: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UPSTREAM_ERROR: 502,
  UPSTREAM_UNAVAILABLE: 503,
  UPSTREAM_TIMEOUT: 504,
} as const;

/** A code from {@link ERROR_STATUS}. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The wire shape of an error, identical over HTTP and MCP. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

/** An error that is safe to show to the caller: its message and details reach HTTP bodies and agents verbatim. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;
  /** Seconds the caller should wait before retrying (429/503), sent as `Retry-After`. */
  readonly retryAfterSec?: number;

  constructor(code: ErrorCode, message: string, opts: { details?: unknown; retryAfterSec?: number; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = "AppError";
    this.code = code;
    this.details = opts.details;
    this.retryAfterSec = opts.retryAfterSec;
  }

  /** HTTP status of this error's code. */
  get status(): number {
    return ERROR_STATUS[this.code];
  }

  /** The body sent to callers. */
  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}

/**
 * Maps anything thrown to an {@link AppError}. Unknown errors become `INTERNAL` with a generic
 * message (the original is kept as `cause` for logs, never shown to callers).
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError("INTERNAL", "Internal server error", { cause: err });
}
