import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/**
 * A Kysely plugin that runs `action` once, right after the first query that `when` names returned:
 * one whose SQL contains `sqlContains`, or one with a row `row` picks. A deterministic way to land
 * another process's commit between two statements of the code under test.
 */
export class RunOnceAfter implements KyselyPlugin {
  private readonly named = new WeakSet<object>();
  private fired = false;
  constructor(
    private readonly when: { sqlContains: string } | { row: (row: UnknownRow) => boolean },
    private readonly action: () => Promise<void>,
  ) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node as { kind: string; sqlFragments?: readonly string[] };
    const marker = 'sqlContains' in this.when ? this.when.sqlContains : undefined;
    if (marker !== undefined && node.kind === 'RawNode' && node.sqlFragments?.join('').includes(marker)) {
      this.named.add(args.queryId);
    }
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const named = 'row' in this.when ? args.result.rows.some(this.when.row) : this.named.has(args.queryId);
    if (!this.fired && named) {
      this.fired = true;
      await this.action();
    }
    return args.result;
  }
}
