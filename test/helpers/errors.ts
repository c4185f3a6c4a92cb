import { expect } from "vitest";
import { AppError } from "../../src/errors.js";

/** Asserts that `fn` throws an `AppError` with code UPSTREAM_ERROR (a venue payload of unexpected shape). */
export function expectUpstreamError(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe("UPSTREAM_ERROR");
    return;
  }
  throw new Error("expected an AppError UPSTREAM_ERROR");
}
