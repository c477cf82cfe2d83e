export * from './advisory-locks';
export * from './create-db';
export * from './database-errors';
export * from './migrate';
export * from './precompiled-sql';
export * from './run-in-transaction';
export * from './run-with-lease';
export * from './sql-milliseconds';
