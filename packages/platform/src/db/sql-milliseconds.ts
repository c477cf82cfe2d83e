import { type RawBuilder, sql } from 'kysely';

/**
 * `ms` milliseconds as a Postgres interval, the one way Tally writes a duration held in
 * milliseconds into SQL (`now() - ${sqlMilliseconds(staleAfterMs)}`). `make_interval` takes the
 * seconds as double precision: fractions of a second are kept to the microsecond and durations
 * past int4 milliseconds (24.8 days) do not overflow. Durations in whole hours, days or months
 * use `make_interval(hours => …)` and the like directly.
 */
export function sqlMilliseconds(ms: number): RawBuilder<string> {
  // guard: sql-milliseconds-seconds
  return sql<string>`make_interval(secs => ${ms / 1000})`;
}

/**
 * sqlMilliseconds for a duration that is an SQL expression of milliseconds (a column of a batch's
 * rows, each with its own duration), so that statement too writes it the one way.
 */
export function sqlMillisecondsOf(ms: RawBuilder<number>): RawBuilder<string> {
  // guard: sql-milliseconds-of-seconds
  return sql<string>`make_interval(secs => ${ms} / 1000.0)`;
}
