import type { ErrorRequestHandler, Response } from "express";
import { AppError, toAppError } from "../src/errors.js";
import { logger } from "../src/lib/log.js";

/** Sends an error as `{error:{code,message,details?}}` with its status (and `Retry-After` when known). */
export function sendError(res: Response, err: unknown): void {
  const e = toAppError(err);
  if (e.code === "INTERNAL") logger.error({ err: e.cause ?? e }, "internal error");
  if (e.retryAfterSec !== undefined) res.setHeader("Retry-After", String(e.retryAfterSec));
  res.status(e.status).json(e.toBody());
}

/**
 * What the body parser's errors (`body-parser` / `raw-body` `type` values) mean to the caller. Every one
 * is the caller's doing, so each is a 4xx; anything else thrown before a route is ours (500).
 */
const BODY_ERRORS: Record<string, (limit?: number) => AppError> = {
  "entity.parse.failed": () => new AppError("BAD_REQUEST", "request body is not valid JSON"),
  "entity.too.large": (limit) => new AppError("PAYLOAD_TOO_LARGE", `request body too large${limit ? ` (limit ${limit} bytes)` : ""}`),
  "charset.unsupported": () => new AppError("UNSUPPORTED_MEDIA_TYPE", "unsupported charset: send the JSON body as UTF-8 (content-type: application/json; charset=utf-8)"),
  "encoding.unsupported": () => new AppError("UNSUPPORTED_MEDIA_TYPE", "unsupported content-encoding: send the body uncompressed, gzip, deflate or br"),
  "request.aborted": () => new AppError("BAD_REQUEST", "request body aborted before it was complete"),
  "request.size.invalid": () => new AppError("BAD_REQUEST", "request body length does not match content-length"),
  "entity.verify.failed": () => new AppError("BAD_REQUEST", "request body refused"),
};

/** Final express error handler: body-parser errors become their 4xx, anything unknown a generic 500. */
export const errorHandler: ErrorRequestHandler = (err, _req, res, _next) => {
  const e = err as { status?: number; type?: string; limit?: number };
  const mapped = e.type ? BODY_ERRORS[e.type] : undefined;
  if (mapped) return sendError(res, mapped(e.limit));
  // An http-errors 4xx we do not know by type is still the caller's doing; keep its status class.
  if (!(err instanceof AppError) && typeof e.status === "number" && e.status >= 400 && e.status < 500) {
    return sendError(res, new AppError("BAD_REQUEST", "malformed request"));
  }
  sendError(res, err);
};
