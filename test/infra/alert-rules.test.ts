import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { itWithPromtool } from './promql-check';

/**
 * The alert rules' behaviour under `promtool test rules`: for each alert whose expression does
 * more than compare one series (aggregation across replicas, ratios, `for:`, `absent`, the parked
 * alert's two branches), series that must fire it with exactly these labels and series that must
 * not. The expected annotations are the rule's own templates filled in here (labels, and the
 * case's rendering of `$value`), so a reworded description does not break a case, while a changed
 * expression, threshold, duration or label set does.
 */

const root = path.resolve(__dirname, '../..');
const alertsFile = path.join(root, 'infra/monitoring/alerts.yml');

type Rule = { alert: string; expr: string; labels: Record<string, string>; annotations: Record<string, string> };
const rules = (parse(readFileSync(alertsFile, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap(
  (g) => g.rules,
);

interface AlertCase {
  /** What the case shows, for the report. */
  what: string;
  alert: string;
  /** promtool's input_series: series selector and its values (one per minute, `_` for missing). */
  series: Array<[string, string]>;
  /** When the rule is evaluated, e.g. `20m`. */
  at: string;
  /** The alerts expected at that time: each one's labels (beyond severity), and `$value` as its templates render it. */
  fires: Array<{ labels: Record<string, string>; value?: Record<string, string> }>;
}

const replicas = (metric: string, values: string[]): Array<[string, string]> =>
  values.map((value, index) => [
    metric.replace(/\{(.*)\}$/, (_all, inner: string) => `{${inner ? `${inner},` : ''}instance="w${index + 1}"}`),
    value,
  ]);

const cases: AlertCase[] = [
  {
    what: 'a parking counted by two replicas is one alert per provider and code',
    alert: 'TallyInboxEventsParked',
    series: replicas('tally_inbox_events_parked_total{provider="stripe",code="handler_error"}', [
      '0x10 1x10',
      '0x10 2x10',
    ]),
    at: '15m',
    fires: [{ labels: { provider: 'stripe', code: 'handler_error' } }],
  },
  {
    what: 'a series a replica creates at 1 (a rare code) fires through the second branch',
    alert: 'TallyInboxEventsParked',
    series: [
      ['tally_inbox_events_parked_total{provider="revenuecat",code="purchase_not_found",instance="w1"}', '_x10 1x10'],
    ],
    at: '12m',
    fires: [{ labels: { provider: 'revenuecat', code: 'purchase_not_found' } }],
  },
  {
    what: 'parkings older than the window do not fire',
    alert: 'TallyInboxEventsParked',
    series: [['tally_inbox_events_parked_total{provider="stripe",code="handler_error",instance="w1"}', '3x40']],
    at: '30m',
    fires: [],
  },
  {
    what: 'the lag is the oldest event of any replica, held 2 minutes',
    alert: 'TallyInboxProcessingLag',
    series: replicas('tally_inbox_oldest_unprocessed_age_seconds{}', ['0x3 1000x10', '0x3 10x10']),
    at: '6m',
    fires: [{ labels: {}, value: { '$value | humanizeDuration': '16m 40s' } }],
  },
  {
    what: 'replicas reporting the same lag are not added up (max, not sum)',
    alert: 'TallyInboxProcessingLag',
    series: replicas('tally_inbox_oldest_unprocessed_age_seconds{}', ['500x10', '500x10']),
    at: '8m',
    fires: [],
  },
  {
    what: 'a lag shorter than `for` does not fire yet',
    alert: 'TallyInboxProcessingLag',
    series: replicas('tally_inbox_oldest_unprocessed_age_seconds{}', ['0x5 1000x10']),
    at: '6m',
    fires: [],
  },
  {
    what: 'no replica reporting the lag for 10 minutes fires',
    alert: 'TallyInboxLagMetricAbsent',
    series: [['tally_inbox_oldest_unprocessed_age_seconds{instance="w1"}', '0x3']],
    at: '20m',
    fires: [{ labels: {} }],
  },
  {
    what: 'a lag reported does not fire the absence',
    alert: 'TallyInboxLagMetricAbsent',
    series: [['tally_inbox_oldest_unprocessed_age_seconds{instance="w1"}', '0x30']],
    at: '20m',
    fires: [],
  },
  {
    what: '10 % of one provider answered 503 for 5 minutes fires for that provider only',
    alert: 'TallyWebhooksUnavailable',
    series: [
      ['tally_webhook_requests_total{provider="stripe",outcome="accepted",instance="i1"}', '0+90x30'],
      ['tally_webhook_requests_total{provider="stripe",outcome="unavailable",instance="i1"}', '0+10x30'],
      ['tally_webhook_requests_total{provider="revenuecat",outcome="accepted",instance="i1"}', '0+100x30'],
    ],
    at: '20m',
    fires: [{ labels: { provider: 'stripe' }, value: { '$value | humanizePercentage': '10%' } }],
  },
  {
    what: '2 % answered 503 stays under the threshold',
    alert: 'TallyWebhooksUnavailable',
    series: [
      ['tally_webhook_requests_total{provider="stripe",outcome="accepted",instance="i1"}', '0+98x30'],
      ['tally_webhook_requests_total{provider="stripe",outcome="unavailable",instance="i1"}', '0+2x30'],
    ],
    at: '20m',
    fires: [],
  },
  {
    what: 'a fifth of the webhooks refused overloaded for 10 minutes fires',
    alert: 'TallyIngestOverloaded',
    series: [
      ['tally_webhook_requests_total{provider="stripe",outcome="accepted",instance="i1"}', '0+80x30'],
      ['tally_webhook_requests_total{provider="stripe",outcome="overloaded",instance="i1"}', '0+20x30'],
    ],
    at: '20m',
    fires: [{ labels: { provider: 'stripe' }, value: { '$value | humanizePercentage': '20%' } }],
  },
  {
    what: 'most webhooks failing authentication, at volume, fires',
    alert: 'TallyWebhookAuthFailing',
    series: [
      ['tally_webhook_requests_total{provider="revenuecat",outcome="accepted",instance="i1"}', '0+1x30'],
      ['tally_webhook_requests_total{provider="revenuecat",outcome="unauthorized",instance="i1"}', '0+9x30'],
    ],
    at: '20m',
    fires: [{ labels: { provider: 'revenuecat' }, value: { '$value | humanizePercentage': '90%' } }],
  },
  {
    what: 'a few forgeries among no traffic (fewer than 5 in 10 minutes) do not page',
    alert: 'TallyWebhookAuthFailing',
    series: [
      [
        'tally_webhook_requests_total{provider="stripe",outcome="bad_signature",instance="i1"}',
        '0 0 1 1 2 2 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3',
      ],
    ],
    at: '15m',
    fires: [],
  },
  {
    what: 'a queue backlog is the largest replica view per queue, not the sum',
    alert: 'TallyQueueBacklogHigh',
    series: [
      ...replicas('tally_queue_jobs{queue="inbox",state="waiting"}', ['600x20', '600x20']),
      ...replicas('tally_queue_jobs{queue="emails",state="waiting"}', ['1500x20', '1500x20']),
      ['tally_queue_jobs{queue="inbox",state="delayed",instance="w1"}', '5000x20'],
    ],
    at: '15m',
    fires: [{ labels: { queue: 'emails' }, value: { $value: '1500' } }],
  },
  {
    what: 'an app webhook message undelivered for over an hour, for 15 minutes, fires',
    alert: 'TallyAppWebhookBacklogOld',
    series: replicas('tally_app_webhook_oldest_pending_age_seconds{}', ['4000x20', '100x20']),
    at: '16m',
    fires: [{ labels: {}, value: { '$value | humanizeDuration': '1h 6m 40s' } }],
  },
  {
    what: 'reconciliation money findings fire per kind; missing events alone do not',
    alert: 'TallyReconciliationMoneyMismatch',
    series: [
      ['tally_reconcile_findings{kind="ledger_rows_without_event",instance="s1"}', '2x5'],
      ['tally_reconcile_findings{kind="events_without_rows",instance="s1"}', '0x5'],
      ['tally_reconcile_findings{kind="missing_events",instance="s1"}', '7x5'],
    ],
    at: '3m',
    fires: [{ labels: { kind: 'ledger_rows_without_event' }, value: { $value: '2' } }],
  },
  {
    what: 'an app webhook message failing for good fires for its type',
    alert: 'TallyAppWebhookFailed',
    series: [['tally_app_webhook_messages_failed_total{type="wallet.credited",instance="w1"}', '0x5 1x10']],
    at: '10m',
    fires: [{ labels: { type: 'wallet.credited' }, value: { '$value | humanize': '1' } }],
  },
  {
    what: 'most finished auto top-up runs failing, summed across replicas, is one alert; retries count on neither side',
    alert: 'TallyAutoTopupFailing',
    series: [
      ['tally_auto_topup_attempts_total{outcome="succeeded",instance="w1"}', '0+1x60'],
      ['tally_auto_topup_attempts_total{outcome="declined",instance="w1"}', '0+1x60'],
      ['tally_auto_topup_attempts_total{outcome="requires_action",instance="w2"}', '0+1x60'],
      ['tally_auto_topup_attempts_total{outcome="failed",instance="w2"}', '0+1x60'],
      ['tally_auto_topup_attempts_total{outcome="retry",instance="w1"}', '0+5x60'],
    ],
    at: '45m',
    fires: [{ labels: {}, value: { '$value | humanizePercentage': '75%' } }],
  },
  {
    what: 'a quarter of the auto top-up charges declined stays under the threshold',
    alert: 'TallyAutoTopupFailing',
    series: [
      ['tally_auto_topup_attempts_total{outcome="succeeded",instance="w1"}', '0+3x60'],
      ['tally_auto_topup_attempts_total{outcome="declined",instance="w1"}', '0+1x60'],
    ],
    at: '45m',
    fires: [],
  },
  {
    what: 'Stripe unreachable (runs asked again later) is not a failed charge',
    alert: 'TallyAutoTopupFailing',
    series: [
      ['tally_auto_topup_attempts_total{outcome="succeeded",instance="w1"}', '0+1x60'],
      ['tally_auto_topup_attempts_total{outcome="retry",instance="w1"}', '0+5x60'],
    ],
    at: '45m',
    fires: [],
  },
  {
    what: 'four declines and nothing else in 30 minutes (100 %) are too few to page',
    alert: 'TallyAutoTopupFailing',
    series: [
      ['tally_auto_topup_attempts_total{outcome="succeeded",instance="w1"}', '0x60'],
      ['tally_auto_topup_attempts_total{outcome="declined",instance="w1"}', '0 1 2 3 4 4x60'],
    ],
    at: '20m',
    fires: [],
  },
];

/** A rule's annotation template filled in as Prometheus would: `{{ $labels.x }}` and the case's `$value` renderings. */
function render(
  alert: string,
  template: string,
  labels: Record<string, string>,
  values: Record<string, string>,
): string {
  return template.replace(/\{\{\s*(.*?)\s*\}\}/g, (_whole, inner: string) => {
    const label = /^\$labels\.(\w+)$/.exec(inner)?.[1];
    if (label !== undefined) {
      const value = labels[label];
      if (value === undefined) throw new Error(`${alert}: its template needs label ${label}`);
      return value;
    }
    const rendered = values[inner];
    if (rendered === undefined) throw new Error(`${alert}: its template needs a rendering of ${inner}`);
    return rendered;
  });
}

function ruleOf(name: string): Rule {
  const rule = rules.find((r) => r.alert === name);
  if (!rule) throw new Error(`no alert ${name} in alerts.yml`);
  return rule;
}

function promtoolTests() {
  return {
    rule_files: [alertsFile],
    evaluation_interval: '1m',
    tests: cases.map((c) => {
      const rule = ruleOf(c.alert);
      return {
        name: `${c.alert}: ${c.what}`,
        interval: '1m',
        input_series: c.series.map(([series, values]) => ({ series, values })),
        alert_rule_test: [
          {
            eval_time: c.at,
            alertname: c.alert,
            exp_alerts: c.fires.map((fire) => {
              const labels = { ...rule.labels, ...fire.labels };
              return {
                exp_labels: labels,
                exp_annotations: Object.fromEntries(
                  Object.entries(rule.annotations).map(([key, template]) => [
                    key,
                    render(c.alert, template, labels, fire.value ?? {}),
                  ]),
                ),
              };
            }),
          },
        ],
      };
    }),
  };
}

describe('infra/monitoring/alerts.yml under promtool test rules', () => {
  it('has a case for every alert, or names it a plain threshold on one series family', () => {
    // `sum by (…) (increase(x[w])) > 0` or one rate or gauge over a threshold: no aggregation
    // across replicas that could count twice, no ratio, no look-back branch.
    const plainThresholds = [
      'TallyLedgerReferenceConflict',
      'TallyRevenueCatCustomerCreated',
      'TallyInboxProcessingSlow',
      'TallyInboxEventsParkedUnattended',
      'TallyReconciliationBackfilling',
      'TallyAppleReconciliationRefused',
      'TallyAppleReconciliationRecording',
      'TallyWebhookErrors',
      'TallyWebhookBadSignatureSpike',
      'TallyRelayReenqueueingContinuously',
    ];
    const names = rules.map((r) => r.alert);
    expect(plainThresholds.filter((name) => !names.includes(name))).toEqual([]);
    const covered = new Set(cases.map((c) => c.alert));
    expect(names.filter((name) => !covered.has(name) && !plainThresholds.includes(name))).toEqual([]);
  });

  itWithPromtool(
    root,
    'alert-rules.test: promtool test rules',
    'fires exactly the expected alerts in every case',
    (promtool) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'tally-alert-tests-'));
      try {
        const file = path.join(dir, 'alerts.test.yml');
        writeFileSync(file, stringify(promtoolTests()));
        let output: string;
        try {
          output = execFileSync(promtool, ['test', 'rules', file], { encoding: 'utf8', stdio: 'pipe' });
        } catch (error) {
          const failed = error as { stdout?: string; stderr?: string };
          throw new Error(`promtool test rules failed:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
        }
        expect(output).toContain('SUCCESS');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
