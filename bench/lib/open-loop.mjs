// An open-loop load generator, corrected for coordinated omission: request i is scheduled at
// start + i / rate whatever happened to the earlier ones, and its latency is measured from that
// scheduled time, not from when a free connection let it go. A server that stalls therefore
// shows the stall in every request scheduled during it (a closed-loop tool such as autocannon
// would simply send fewer requests and report only the lucky ones).
import http from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { percentile } from './stats.mjs';

/**
 * Sends `rate` requests per second for `durationSeconds` to `url` (POST). `next(i)` returns
 * { body, headers } for request i, and optionally its `path` (else the url's). Connections: a
 * keep-alive pool of up to `maxSockets`; a request that finds none free waits in the agent's
 * queue, and that wait counts as latency. `okStatus`: the status counted as `ok` (a debit's 201).
 * `warmupSeconds`: the load starts that long before the measured run, at the same rate, and the
 * requests scheduled in it are left out of the figures (the pool's sockets opened, the server's
 * first requests after an idle pause); what they saw is reported apart (`warmup`), not hidden.
 */
export async function runOpenLoop({
  url,
  rate,
  durationSeconds,
  next,
  maxSockets = 256,
  timeoutMs = 30_000,
  okStatus = 200,
  warmupSeconds = 0,
}) {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const warmup = Math.round(rate * warmupSeconds);
  const total = warmup + Math.max(1, Math.round(rate * durationSeconds));
  const intervalNs = 1e9 / rate;
  const latenciesMs = new Float64Array(total);
  const scheduledAtMs = new Float64Array(total);
  const statuses = new Map();
  let errors = 0;
  let done = 0;
  let sent = 0;
  let maxLagMs = 0;
  const start = process.hrtime.bigint() + 5_000_000n;
  // The generator's own garbage-collection pauses: during one, no request is sent and no answer
  // is timed, so every request in flight looks slower. Reported so a tail can be told apart from
  // the server's.
  const generatorGc = { pauses: 0, totalMs: 0, maxMs: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      generatorGc.pauses += 1;
      generatorGc.totalMs += entry.duration;
      generatorGc.maxMs = Math.max(generatorGc.maxMs, entry.duration);
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });

  await new Promise((resolveAll) => {
    const finish = (index, scheduled, status) => {
      latenciesMs[index] = Number(process.hrtime.bigint() - scheduled) / 1e6;
      scheduledAtMs[index] = Number(scheduled - start) / 1e6;
      if (status === null) errors += 1;
      else statuses.set(status, (statuses.get(status) ?? 0) + 1);
      done += 1;
      if (done === total) resolveAll();
    };
    const send = (index, scheduled) => {
      const { body, headers, path } = next(index);
      const request = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: path ?? target.pathname,
          method: 'POST',
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          timeout: timeoutMs,
        },
        (response) => {
          response.resume();
          response.on('end', () => finish(index, scheduled, response.statusCode));
          response.on('error', () => finish(index, scheduled, null));
        },
      );
      request.on('timeout', () => request.destroy(new Error('timeout')));
      request.on('error', () => finish(index, scheduled, null));
      request.end(body);
    };
    const tick = () => {
      const now = process.hrtime.bigint();
      while (sent < total) {
        const scheduled = start + BigInt(Math.round(sent * intervalNs));
        if (scheduled > now) break;
        const lagMs = Number(now - scheduled) / 1e6;
        if (lagMs > maxLagMs) maxLagMs = lagMs;
        send(sent, scheduled);
        sent += 1;
      }
      if (sent < total) setImmediate(tick);
    };
    setImmediate(tick);
  });
  agent.destroy();
  gcObserver.disconnect();
  const measured = latenciesMs.subarray(warmup);
  const sorted = Array.from(measured).sort((a, b) => a - b);
  const ok = statuses.get(okStatus) ?? 0;
  const p99 = percentile(sorted, 0.99);
  const warmed = Array.from(latenciesMs.subarray(0, warmup)).sort((a, b) => a - b);
  return {
    rate,
    durationSeconds,
    requests: total - warmup,
    // Counted over the warm-up's requests too: an error there is an error.
    ok,
    non200: total - ok - errors,
    errors,
    warmup:
      warmup === 0
        ? null
        : { seconds: warmupSeconds, requests: warmup, p99: percentile(warmed, 0.99), max: warmed[warmed.length - 1] },
    p50: percentile(sorted, 0.5),
    p99,
    p999: percentile(sorted, 0.999),
    max: sorted[sorted.length - 1],
    // How late the generator itself sent its worst request (its own CPU starvation on a busy box).
    generatorMaxLagMs: maxLagMs,
    generatorGc: { pauses: generatorGc.pauses, totalMs: round1(generatorGc.totalMs), maxMs: round1(generatorGc.maxMs) },
    tail: tailWindows(measured, scheduledAtMs.subarray(warmup), p99),
  };
}

/**
 * Where the slowest 1% came from: the requests at or over p99 grouped by the 100 ms window they
 * were scheduled in, busiest first (a few windows = stalls of the server or the machine; many
 * = a latency spread over the whole run).
 */
function tailWindows(latenciesMs, scheduledAtMs, p99) {
  const windows = new Map();
  for (let i = 0; i < latenciesMs.length; i += 1) {
    if (latenciesMs[i] < p99) continue;
    const at = Math.floor(scheduledAtMs[i] / 100) * 100;
    const entry = windows.get(at) ?? { atMs: at, requests: 0, maxMs: 0 };
    entry.requests += 1;
    entry.maxMs = Math.max(entry.maxMs, Math.round(latenciesMs[i] * 10) / 10);
    windows.set(at, entry);
  }
  const list = [...windows.values()].sort((a, b) => b.requests - a.requests);
  return { windows: list.length, busiest: list.slice(0, 5) };
}

const round1 = (value) => Math.round(value * 10) / 10;
