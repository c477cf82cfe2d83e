import type { ColumnType } from 'kysely';

/** Timestamps are written by the database clock and read back as Date. */
export type DbTime = ColumnType<Date, Date | string | undefined, Date | string>;
export type DbTimeNullable = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** Never updated: every column is insert-only. */
export type InsertOnly<T> = ColumnType<T, T, never>;
