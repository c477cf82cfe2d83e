import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRegistry } from '@tally/platform';
import { parse } from 'yaml';
import { createApiMetrics } from '../../apps/api/src/api-metrics';
import { createIngestMetrics } from '../../apps/ingest/src/ingest-metrics';
import { createWorkerMetrics, workerMetricFamilies } from '../../apps/worker/src/metrics/worker-metrics';
import {
  declaredMetricFamilies,
  itWithPromtool,
  parsePromQL,
  registeredMetricNames,
  withGrafanaVariables,
} from './promql-check';

const root = path.resolve(__dirname, '../..');
const alertsFile = path.join(root, 'infra/monitoring/alerts.yml');
const dashboardFile = path.join(root, 'infra/monitoring/grafana-dashboard.json');
// Each app defines its own metric families (platform only makes the registry).
const metricsSources = [
  'apps/ingest/src/ingest-metrics.ts',
  'apps/api/src/api-metrics.ts',
  'apps/worker/src/metrics/worker-metrics.ts',
].map((file) => path.join(root, file));
/** What the sources declare and the registries hold (a definition spread from billing-core is only in the latter). */
const exported = new Set([
  ...metricsSources.flatMap((file) => [...registeredMetricNames(file)]),
  ...tallyMetricFamilies().flatMap(({ name, type }) =>
    type === 'histogram' ? [name, `${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
  ),
]);

type Rule = {
  alert?: string;
  record?: string;
  expr: unknown;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
};
type RuleFile = { groups: Array<{ name: string; rules: Rule[] }> };
const rules = (parse(readFileSync(alertsFile, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules);

type Panel = {
  id: number;
  title: string;
  type: string;
  gridPos: object;
  targets?: Array<{ refId: string; expr: string }>;
};
const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string }> };
};
const dashboardQueries = dashboard.panels.flatMap((p) =>
  (p.targets ?? []).map((t) => ({ where: `${p.title} ${t.refId}`, expr: withGrafanaVariables(t.expr) })),
);

/** Prometheus' duration syntax (for:, ranges): units from ms to y, largest first. */
const promDuration = /^(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?$/;

describe('the PromQL check', () => {
  it('accepts valid queries and names their metrics', () => {
    expect(parsePromQL('sum by (provider) (rate(a_total{x="y"}[5m])) / sum(rate(b_total[5m])) > 0.1')).toEqual({
      errors: [],
      metricNames: ['a_total', 'b_total'],
    });
  });

  it.each([
    ['an unclosed parenthesis', 'sum(rate(a_total[5m])'],
    ['an unknown function', 'ratee(a_total[5m])'],
    ['a missing range on rate', 'rate(a_total) +'],
    ['a bad label matcher', 'a_total{x=}'],
  ])('rejects %s', (_what, expr) => {
    expect(parsePromQL(expr).errors).not.toEqual([]);
  });

  it("reads the metric names that the apps' metrics modules register, with histogram series", () => {
    expect([...exported]).toEqual(
      expect.arrayContaining([
        'tally_webhook_requests_total',
        'tally_inbox_processing_duration_seconds_bucket',
        'tally_queue_jobs',
      ]),
    );
  });
});

describe('infra/monitoring/alerts.yml', () => {
  it('has groups of alerts, each with a valid expression, duration, severity and annotations', () => {
    expect(rules.length).toBeGreaterThan(5);
    const problems = rules.flatMap((rule) => {
      const name = rule.alert ?? rule.record ?? '?';
      const found: string[] = [];
      if (!rule.alert) found.push(`${name}: not an alert`);
      if (typeof rule.expr !== 'string') return [...found, `${name}: expr is not a string`];
      found.push(...parsePromQL(rule.expr).errors.map((e) => `${name}: ${e}`));
      if (rule.for !== undefined && !promDuration.test(rule.for)) found.push(`${name}: for ${rule.for}`);
      if (!['critical', 'warning'].includes(rule.labels?.severity ?? '')) found.push(`${name}: severity`);
      if (!rule.annotations?.summary || !rule.annotations.description) found.push(`${name}: annotations`);
      return found;
    });
    expect(problems).toEqual([]);
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
  });

  it('alerts on auto top-up charges failing, over the finished runs only', () => {
    const alert = rules.find((rule) => rule.alert === 'TallyAutoTopupFailing');
    const { metricNames } = parsePromQL(String(alert?.expr));
    expect([...new Set(metricNames)]).toEqual(['tally_auto_topup_attempts_total']);
  });

  it('alerts on app webhook messages that failed for good', () => {
    const alert = rules.find((rule) => rule.alert === 'TallyAppWebhookFailed');
    expect(parsePromQL(String(alert?.expr)).metricNames).toEqual(['tally_app_webhook_messages_failed_total']);
  });

  itWithPromtool(root, 'monitoring.test: promtool check rules', 'passes `promtool check rules`', (promtool) => {
    const output = execFileSync(promtool, ['check', 'rules', alertsFile], { encoding: 'utf8' });
    expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
  });
});

describe('infra/monitoring/grafana-dashboard.json', () => {
  it('is a dashboard whose panels each have an id, a position and parseable queries', () => {
    expect(dashboard.uid).toBe('tally-overview');
    expect(dashboard.templating.list.map((v) => v.type)).toContain('datasource');
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    expect(dashboardQueries.length).toBeGreaterThanOrEqual(dashboard.panels.length);
    const problems = dashboardQueries.flatMap((q) => parsePromQL(q.expr).errors.map((e) => `${q.where}: ${e}`));
    expect(problems).toEqual([]);
  });

  it.each([
    ['webhook requests by outcome', 'tally_webhook_requests_total', 'outcome'],
    ['processing duration', 'tally_inbox_processing_duration_seconds_bucket', 'histogram_quantile'],
    ['parked events', 'tally_inbox_events_parked_total', 'code'],
    ['deferred events', 'tally_inbox_events_deferred_total', 'provider'],
    ['reference conflicts', 'tally_ledger_reference_conflicts_total', 'provider'],
    ['relay re-enqueues', 'tally_relay_reenqueued_total', 'source'],
    ['queue depth per queue', 'tally_queue_jobs', 'queue'],
    ['inbox lag', 'tally_inbox_oldest_unprocessed_age_seconds', 'max'],
    ['inbox lag quantiles', 'tally_inbox_event_lag_seconds_bucket', 'histogram_quantile(0.95'],
    ['ledger tokens by direction and reason', 'tally_ledger_tokens', 'by (direction, reason)'],
    ['ledger entries by direction and reason', 'tally_ledger_entries', 'by (direction, reason)'],
    ['parked events now by provider and type', 'tally_inbox_events_parked', 'by (provider, type)'],
    ['studio request states', 'tally_studio_requests', 'by (status)'],
    ['installment states', 'tally_stripe_installments', 'by (status)'],
    ['reconcile findings', 'tally_reconcile_findings', 'by (kind)'],
    ['time since the last reconciliation', 'tally_reconcile_last_run_timestamp_seconds', 'time()'],
    ['app webhook attempts by outcome', 'tally_app_webhook_attempts_total', 'by (outcome)'],
    ['app webhooks failed by type', 'tally_app_webhook_messages_failed_total', 'by (type)'],
    ['app webhook backlog age', 'tally_app_webhook_oldest_pending_age_seconds', 'max'],
    ['auto top-up runs by outcome', 'tally_auto_topup_attempts_total', 'sum by (outcome)'],
  ])('covers %s', (_what, metric, alsoMentions) => {
    const queries = dashboardQueries.filter((q) => parsePromQL(q.expr).metricNames.includes(metric));
    expect(queries.some((q) => q.expr.includes(alsoMentions))).toBe(true);
  });

  it('has a panel for every series family the processes define (read from the code, not a list)', () => {
    const queried = new Set(dashboardQueries.flatMap((q) => parsePromQL(q.expr).metricNames));
    const quantiled = new Set(
      dashboardQueries
        .filter((q) => q.expr.includes('histogram_quantile('))
        .flatMap((q) => parsePromQL(q.expr).metricNames),
    );
    const families = tallyMetricFamilies();
    expect(families.length).toBeGreaterThan(15);
    const missing = families
      .filter((f) => (f.type === 'histogram' ? !quantiled.has(`${f.name}_bucket`) : !queried.has(f.name)))
      .map((f) => `${f.type} ${f.name}`);
    expect(missing).toEqual([]);
  });
});

/**
 * Every family Tally defines: what the ingest, worker (with the opt-in reconcile series) and api
 * registries hold, minus Node's defaults, plus whatever metrics.ts declares that a factory did not
 * register. Reading both means neither a lazily registered family nor an unusual declaration
 * escapes the coverage check.
 */
function tallyMetricFamilies(): Array<{ name: string; type: string }> {
  const defaults = new Set(
    createRegistry('defaults')
      .getMetricsAsArray()
      .map((m) => m.name),
  );
  const worker = createWorkerMetrics(workerMetricFamilies);
  const byName = new Map<string, string>();
  for (const registry of [createIngestMetrics().registry, worker.registry, createApiMetrics().registry])
    for (const metric of registry.getMetricsAsArray())
      if (!defaults.has(metric.name)) byName.set(metric.name, (metric as unknown as { type: string }).type);
  for (const file of metricsSources)
    for (const [name, type] of declaredMetricFamilies(file)) if (!byName.has(name)) byName.set(name, type);
  return [...byName].map(([name, type]) => ({ name, type }));
}

describe('metric names', () => {
  it('every metric the alerts and the dashboard query is one Tally exports', () => {
    const used = [
      ...rules.map((r) => ({ where: `alert ${r.alert}`, expr: String(r.expr) })),
      ...dashboardQueries.map((q) => ({ where: `panel ${q.where}`, expr: q.expr })),
    ].flatMap((q) => parsePromQL(q.expr).metricNames.map((name) => ({ where: q.where, name })));
    expect(used.length).toBeGreaterThan(15);
    expect(used.filter((u) => !exported.has(u.name))).toEqual([]);
  });
});
