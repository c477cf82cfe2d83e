/** Time that tests must control comes from here; schedules use the database clock instead. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
