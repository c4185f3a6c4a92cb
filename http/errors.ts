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

/** Final express error handler: malformed JSON bodies become 400, anything unknown a generic 500. */
export const errorHandler: ErrorRequestHandler = (err, _req, res, _next) => {
  const status = (err as { status?: number; type?: string }).status;
  if (status === 400 || (err as { type?: string }).type === "entity.parse.failed") {
    return sendError(res, new AppError("BAD_REQUEST", "request body is not valid JSON"));
  }
  if (status === 413) return sendError(res, new AppError("BAD_REQUEST", "request body too large"));
  sendError(res, err);
};
