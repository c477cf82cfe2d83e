import type { RawBuilder } from 'kysely';

/**
 * A user id as a statement fragment takes it: a value (bound as a parameter) or an SQL expression
 * naming one (a column of a batch's rows, e.g. `sql.ref('r.user_id')`). The fragments that read a
 * user's state (held tokens, spend counters, auto top-up) take it so that one statement of one
 * user and one statement of a batch of users are written once.
 */
export type UserSql = string | RawBuilder<string>;
