// PromQL checks without Prometheus: @prometheus-io/lezer-promql is the grammar Prometheus' own
// web UI parses queries with. A syntax error or an unknown function leaves an error node.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

// The package's type declarations are ESM-only while Jest runs this file as CommonJS, so the
// package's CommonJS build is loaded with require() and typed here with what is used.
type SyntaxNode = {
  name: string;
  from: number;
  to: number;
  type: { isError: boolean };
  node: { parent: { name: string } | null };
};
const { parser } = require('@prometheus-io/lezer-promql') as {
  parser: { parse(input: string): { iterate(spec: { enter(node: SyntaxNode): void }): void } };
};

export type ParsedQuery = { errors: string[]; metricNames: string[] };

/** Grafana's interval variables stand for durations; other $variables only in label values. */
export function withGrafanaVariables(expr: string): string {
  return expr.replace(/\$__(rate_interval|interval|range)\b/g, '5m');
}

export function parsePromQL(expr: string): ParsedQuery {
  const tree = parser.parse(expr);
  const errors: string[] = [];
  const metricNames: string[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError)
        errors.push(`syntax error at ${node.from}: ${JSON.stringify(expr.slice(node.from, node.from + 20))}`);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        metricNames.push(expr.slice(node.from, node.to));
    },
  });
  return { errors, metricNames };
}

/** The metric families a prom-client source file declares (`new Counter({ name: '…'`), with their type. */
export function declaredMetricFamilies(sourceFile: string): Map<string, string> {
  const source = readFileSync(sourceFile, 'utf8');
  const families = new Map<string, string>();
  for (const m of source.matchAll(/new (Counter|Gauge|Histogram|Summary)\(\{\s*name: '([a-z_:][a-z0-9_:]*)'/g)) {
    const [, type = '', name = ''] = m;
    families.set(name, type.toLowerCase());
  }
  return families;
}

/** The metric families registered in a prom-client source file, with a histogram's series. */
export function registeredMetricNames(sourceFile: string): Set<string> {
  const names = new Set<string>();
  for (const [name, type] of declaredMetricFamilies(sourceFile)) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/** promtool: $PROMTOOL, the copy .ci/run unpacks from Debian's prometheus package, or PATH. */
export function findPromtool(root: string): string | undefined {
  const candidates = [process.env.PROMTOOL, path.join(root, 'node_modules/.cache/promtool/usr/bin/promtool')];
  for (const candidate of candidates) if (candidate && existsSync(candidate)) return candidate;
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return 'promtool';
  } catch {
    return undefined;
  }
}

/**
 * A test that runs promtool: with it when it is found, required under CI (.ci/run installs it),
 * skipped elsewhere with a line saying so. The test gets promtool's path.
 */
export function itWithPromtool(root: string, what: string, name: string, test: (promtool: string) => void): void {
  const promtool = findPromtool(root);
  if (!promtool && process.env.CI !== 'true') {
    process.stderr.write(`[${what}] promtool not found: skipped (.ci/run installs it)\n`);
  }
  (promtool || process.env.CI === 'true' ? it : it.skip)(name, () => {
    expect(promtool).toBeDefined();
    test(promtool ?? 'promtool');
  });
}
