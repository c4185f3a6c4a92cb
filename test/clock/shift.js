/**
 * Moves this process's calendar ahead by `MARKETGATE_TEST_CLOCK_SHIFT_DAYS` days (a whole number, 0 to 3650), for
 * the date-shifted runs of the suite (test/clock/run-shifted.sh): `Date.now()`, `new Date()` and `Date()` read the
 * wall clock plus the shift; every other use of `Date` (parsing, arithmetic, `instanceof`) is unchanged. Loaded
 * with `node --import` through `NODE_OPTIONS`, so vitest, its workers and every child process (services, the
 * sandbox, the CLI) share one moved calendar. A test or simulated value pinned to a calendar day fails here.
 *
 * What the shift cannot move is outside Node: anvil's blocks (src/payments/local-chain/anvil.ts starts its chain at
 * `Date.now()`, so it follows) and the OS clock that TLS checks certificates against (the test certificate of
 * src/sandbox/https-receiver.ts is valid years either side of `Date.now()`).
 * Throws RangeError at load when the setting is not a whole number of days in range.
 */
const raw = process.env.MARKETGATE_TEST_CLOCK_SHIFT_DAYS ?? "0";
const days = Number(raw);
if (!Number.isInteger(days) || days < 0 || days > 3650) {
  throw new RangeError(`MARKETGATE_TEST_CLOCK_SHIFT_DAYS must be a whole number of days from 0 to 3650, got ${JSON.stringify(raw)}`);
}
if (days > 0 && !globalThis.__marketgateClockShift) {
  const offsetMs = days * 86_400_000;
  const RealDate = globalThis.Date;
  const now = () => RealDate.now() + offsetMs;
  /** `Date` with the shift applied to "now"; construction from explicit values is the real `Date`'s. */
  function ShiftedDate(...args) {
    if (!new.target) return new RealDate(now()).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [now()] : args, new.target);
  }
  Object.setPrototypeOf(ShiftedDate, RealDate);
  ShiftedDate.prototype = RealDate.prototype;
  ShiftedDate.now = now;
  globalThis.Date = ShiftedDate;
  globalThis.__marketgateClockShift = offsetMs;
}
