import type { Clock } from '@tally/billing-core';

/** A clock a test can set; it follows real time until it is set. */
export class FakeClock implements Clock {
  private fixed: Date | undefined;

  now(): Date {
    return this.fixed ? new Date(this.fixed) : new Date();
  }

  set(instant: Date | string): void {
    this.fixed = new Date(instant);
  }

  /** Back to real time. */
  reset(): void {
    this.fixed = undefined;
  }
}
