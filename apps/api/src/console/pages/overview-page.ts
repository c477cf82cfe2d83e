import type { HourlyActivity, OperationalStates, UsageDay } from '@tally/billing-core';
import type { queueDepthStates } from '@tally/platform';
import type { AppWebhookDelivery } from '../../app-webhook-delivery';
import { barChart, hourlyChart } from '../charts';
import { html } from '../html';
import { consoleBase, dashboardLink, notConfiguredBanner, page, table } from '../layout';

export interface OverviewData {
  depths: { queue: string; counts: Record<(typeof queueDepthStates)[number], number> }[];
  oldestDueAgeSeconds: number;
  counts: OperationalStates;
  /** `readAppWebhookGauges`: the outbox's backlog, as the relay's gauges read it. */
  appWebhooks: { oldestPendingAgeSeconds: number; pending: number; failed: number };
  /** `readHourlyActivity`: the last 24 hours, hour by hour. */
  activity: HourlyActivity[];
  /** Whether app-webhook messages are delivered (APP_WEBHOOK_URL). */
  delivery: AppWebhookDelivery;
  /** `reportUsage` across users over `usageDays` (oldest first), for the tokens spent per feature per day. */
  usage: { days: UsageDay[]; dates: string[] };
}

/** The overview: the numbers the metrics gauges show, read by the same queries at request time. */
export function overviewPage(data: OverviewData): string {
  const parked = data.counts.parked.reduce((sum, row) => sum + row.count, 0);
  const failedJobs = data.depths.reduce((sum, depth) => sum + depth.counts.failed, 0);
  const waitingJobs = data.depths.reduce((sum, depth) => sum + depth.counts.waiting + depth.counts.delayed, 0);
  const failedStudio = data.counts.studioRequests.find((row) => row.status === 'failed')?.count ?? 0;
  const card = (value: number | string, label: string, href?: string) =>
    html`<div class="card"><div class="value">${href ? html`<a href="${href}">${value}</a>` : value}</div><div class="label">${label}</div></div>`;
  return page({
    title: 'Overview',
    section: 'overview',
    body: html`
<div class="cards">
  ${card(parked, 'parked inbox events', `${consoleBase}/events?status=failed`)}
  ${card(formatAge(data.oldestDueAgeSeconds), 'oldest due event waiting')}
  ${card(waitingJobs, 'jobs waiting or delayed')}
  ${card(failedJobs, 'failed jobs (all queues)', dashboardLink)}
  ${card(failedStudio, 'failed studio requests')}
  ${card(data.appWebhooks.failed, 'failed app-webhook messages', `${consoleBase}/app-webhooks?status=failed`)}
  ${
    data.delivery === 'on'
      ? html`${card(data.appWebhooks.pending, 'app-webhook messages pending', `${consoleBase}/app-webhooks?status=pending`)}
  ${card(formatAge(data.appWebhooks.oldestPendingAgeSeconds), 'oldest pending message')}`
      : card(
          data.appWebhooks.pending,
          'app-webhook messages not delivered: APP_WEBHOOK_URL is not set',
          `${consoleBase}/app-webhooks?status=pending`,
        )
  }
</div>
${notConfiguredBanner(data.delivery)}
<h2>Last 24 hours, per hour</h2>
<div class="sparks">
  ${hourlyChart(series(data.activity, 'received'), { label: 'inbox events received' })}
  ${hourlyChart(series(data.activity, 'finished'), { label: 'inbox events processed or ignored' })}
  ${hourlyChart(series(data.activity, 'parked'), { label: 'inbox events parked (still parked)', tone: 'bad' })}
  ${hourlyChart(series(data.activity, 'messagesDelivered'), { label: 'app-webhook messages delivered' })}
  ${hourlyChart(series(data.activity, 'messagesFailed'), { label: 'app-webhook messages failed (still failed)', tone: 'bad' })}
</div>
<h2>Tokens spent per feature per day</h2>
${usageCharts(data.usage)}
<div class="grid2">
  <section>
    <h2>Queue depths</h2>
    ${data.depths.map(
      (
        depth,
      ) => html`<h3>${depth.queue} <a href="${dashboardLink}/queue/${encodeURIComponent(depth.queue)}">(in Bull Board)</a></h3>
    ${barChart(
      Object.entries(depth.counts).map(([state, value]) => ({ label: state, value })),
      { label: `jobs of queue ${depth.queue} by state` },
    )}`,
    )}
  </section>
  <section>
    <h2>Parked events by type</h2>
    ${
      data.counts.parked.length === 0
        ? html`<p class="muted">None parked.</p>`
        : html`${barChart(
            data.counts.parked.map((row) => ({ label: `${row.provider} ${row.type}`, value: row.count })),
            { label: 'parked inbox events by provider and type' },
          )}
    ${table(
      ['Provider', 'Type', 'Count', ''],
      data.counts.parked.map((row) => [
        row.provider,
        row.type,
        row.count,
        html`<a href="${consoleBase}/events?status=failed&amp;provider=${row.provider}&amp;type=${encodeURIComponent(row.type)}">list</a>`,
      ]),
      'parked events by type',
    )}`
    }
    <h2>Studio requests and installments by status</h2>
    ${barChart(
      [
        ...data.counts.studioRequests.map((row) => ({ label: `studio ${row.status}`, value: row.count })),
        ...data.counts.installments.map((row) => ({ label: `installment ${row.status}`, value: row.count })),
      ],
      { label: 'studio requests and installments by status' },
    )}
  </section>
</div>
<p class="muted">The numbers are the same reads as the worker's scrape-time gauges (tally_queue_jobs, tally_inbox_events_parked, tally_inbox_oldest_unprocessed_age_seconds, tally_app_webhook_messages, tally_app_webhook_oldest_pending_age_seconds), taken now. The hourly charts count the rows' own timestamps (received, processed, parked, delivered, failed); parked and failed count the rows still in that state.</p>`,
  });
}

function series(activity: readonly HourlyActivity[], field: Exclude<keyof HourlyActivity, 'hour'>) {
  return activity.map((hour) => ({ hour: hour.hour, value: hour[field] }));
}

function formatAge(seconds: number): string {
  if (seconds < 1) return '0 s';
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3_600)} h`;
}

/** One daily chart per feature of the tokens its uses charged, over the report's dates (no uses: a line saying so). */
function usageCharts(usage: OverviewData['usage']) {
  const features = [...new Set(usage.days.map((day) => day.feature))].sort();
  if (features.length === 0) return html`<p class="muted">No priced use in the last ${usage.dates.length} days.</p>`;
  return html`<div class="sparks">
  ${features.map((feature) =>
    hourlyChart(
      usage.dates.map((date) => ({
        hour: new Date(`${date}T00:00:00Z`),
        value: usage.days
          .filter((day) => day.feature === feature && day.date === date)
          .reduce((sum, day) => sum + day.tokens, 0),
      })),
      { label: `tokens spent on ${feature}`, per: 'day' },
    ),
  )}
</div>`;
}
