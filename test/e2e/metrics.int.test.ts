import { TestStack } from '../support/stack';

describe('metrics: each process shows what it moves, from zero', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start();
  });
  afterAll(() => stack.stop());

  it('ingest exports webhook counters at zero before any webhook, and no worker families', async () => {
    const text = await (await fetch(`http://127.0.0.1:${stack.ingest.port}/metrics`)).text();
    expect(text).toContain('tally_webhook_requests_total{provider="stripe",outcome="accepted",service="ingest"} 0');
    expect(text).toContain('tally_webhook_requests_total{provider="revenuecat",outcome="error",service="ingest"} 0');
    for (const family of ['tally_inbox_events_parked_total', 'tally_queue_jobs', 'tally_relay_reenqueued_total']) {
      expect(text).not.toContain(family);
    }
  });

  it('the worker exports the parked counter before anything is parked, and no webhook counters', async () => {
    const worker = stack.startWorker();
    await worker.refreshGauges();
    const text = await worker.metrics.registry.metrics();
    expect(text).toContain(
      'tally_inbox_events_parked_total{provider="stripe",code="attempts_exhausted",service="worker"} 0',
    );
    expect(text).toContain('tally_ledger_reference_conflicts_total{provider="revenuecat",service="worker"} 0');
    expect(text).toContain('tally_queue_jobs{queue="inbox",state="waiting",service="worker"} 0');
    expect(text).toContain('tally_inbox_oldest_unprocessed_age_seconds{service="worker"} 0');
    expect(text).not.toContain('tally_webhook_requests_total');
    await stack.stopWorkers();
  });
});
