// `node --import ./register.mjs` with FERRY_TEST_CLOCK_SKEW_MS: the process's wall clock is that
// far off (Date.now() and new Date()), as on a machine whose clock was never set. The monotonic
// clock (performance.now) is left alone, as it is on such a machine.
const skew = Number(process.env.FERRY_TEST_CLOCK_SKEW_MS ?? 0);
const Real = globalThis.Date;
class Skewed extends Real {
  constructor(...args) {
    if (args.length === 0) super(Real.now() + skew);
    else super(...args);
  }
  static now() {
    return Real.now() + skew;
  }
}
globalThis.Date = Skewed;
