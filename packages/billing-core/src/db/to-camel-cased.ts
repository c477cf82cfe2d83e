/** A snake_case column name in camelCase: `balance_before` → `balanceBefore`. */
export type CamelCase<Name extends string> = Name extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : Name;

/** A row with its columns named in camelCase, as the views show them. */
export type CamelCased<Row> = { [Column in keyof Row & string as CamelCase<Column>]: Row[Column] };

/**
 * A row as a view shows it: the same values in the same order under camelCase names, so a view
 * that shows columns as they are is their list, not a second list of names to keep in step.
 */
export function toCamelCased<Row extends object>(row: Row): CamelCased<Row> {
  const view: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    view[column.replace(/_([a-z0-9])/g, (_underscore, letter: string) => letter.toUpperCase())] = value;
  }
  return view as CamelCased<Row>;
}
