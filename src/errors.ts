/**
 * One closed set of error codes, mapped to HTTP status and MCP `isError` results in one place.
 *
 * HTTP body: `{ "error": { "code", "message", "details"? } }`, with `Retry-After` when the caller should wait.
 * MCP has no headers: its errors carry {@link AppError.toMcpBody} (the same body plus `retry_after_sec`).
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

/** An error over MCP: {@link ErrorBody} and, when the caller should wait before retrying, the seconds to wait. */
export interface McpErrorBody extends ErrorBody {
  retry_after_sec?: number;
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

  /**
   * The body as MCP sends it (a `tools/call` isError result's text, a JSON-RPC error's `data`): {@link toBody}
   * plus `retry_after_sec` (seconds) when HTTP would send `Retry-After`, since MCP results have no headers.
   */
  toMcpBody(): McpErrorBody {
    return { ...this.toBody(), ...(this.retryAfterSec === undefined ? {} : { retry_after_sec: this.retryAfterSec }) };
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
