import { expect } from "vitest";
import { AppError } from "../../src/errors.js";

/**
 * Asserts that `fn` throws an `AppError` with `code` (default UPSTREAM_ERROR, a venue payload of
 * unexpected shape) and, when given, a message matching `message`.
 */
export function expectAppError(fn: () => unknown, code = "UPSTREAM_ERROR", message?: RegExp): void {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(AppError);
  expect((thrown as AppError).code).toBe(code);
  if (message) expect((thrown as AppError).message).toMatch(message);
}

/** The `AppError` that `fn` throws or rejects with, failing the test when it throws anything else or nothing. */
export async function appError(fn: () => unknown): Promise<AppError> {
  try {
    await fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return e as AppError;
  }
  throw new Error("expected an AppError");
}
