// A preload (`--require=<this file>`, through BENCH_INGEST_NODE_FLAGS, BENCH_INGEST_B_NODE_FLAGS or
// BENCH_WORKER_NODE_FLAGS) that records, for one window of a bench run, every allocation site's
// bytes and the process's garbage collections, so a profile says what the collector has to deal
// with, not only how long it took:
// - a sampling heap profile that keeps the objects minor and major collections freed (node's own
//   --heap-prof keeps only the survivors, which hides a short-lived request's allocations), written
//   to $ALLOCATION_SAMPLING_DIR/alloc-<pid>.heapprofile (read it with bench/profile-summary.mjs);
// - the collections of the same window by kind (count, total pause ms) and the process's CPU, in
//   alloc-<pid>.json beside it.
// The window starts ALLOCATION_SAMPLING_START_MS (default 30000) after start-up and lasts
// ALLOCATION_SAMPLING_MS (default 6000). ALLOCATION_SAMPLING_FREED=major keeps only the objects a
// major collection freed (and the survivors): what outlived at least one scavenge, i.e. what the
// young generation promoted or copied; the default, all, keeps everything allocated. Sampling
// slows the process: profile, do not measure.
const inspector = require('node:inspector');
const { PerformanceObserver, constants } = require('node:perf_hooks');
const { writeFileSync } = require('node:fs');
const path = require('node:path');

const dir = process.env.ALLOCATION_SAMPLING_DIR ?? '/tmp';
const startMs = Number(process.env.ALLOCATION_SAMPLING_START_MS ?? 30_000);
const windowMs = Number(process.env.ALLOCATION_SAMPLING_MS ?? 6_000);
const keepMinor = (process.env.ALLOCATION_SAMPLING_FREED ?? 'all') !== 'major';
const kinds = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

const session = new inspector.Session();
session.connect();
const collections = {};
let recording = false;
new PerformanceObserver((list) => {
  if (!recording) return;
  for (const entry of list.getEntries()) {
    const kind = kinds[entry.detail?.kind] ?? 'other';
    collections[kind] ??= { count: 0, ms: 0 };
    collections[kind].count += 1;
    collections[kind].ms += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

setTimeout(() => {
  const cpuAtStart = process.cpuUsage();
  recording = true;
  session.post(
    'HeapProfiler.startSampling',
    { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: keepMinor },
    (error) => {
      if (error) writeFileSync(path.join(dir, `alloc-${process.pid}.error`), String(error));
    },
  );
  setTimeout(() => {
    recording = false;
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error) return writeFileSync(path.join(dir, `alloc-${process.pid}.error`), String(error));
      writeFileSync(path.join(dir, `alloc-${process.pid}.heapprofile`), JSON.stringify(result.profile));
      const cpu = process.cpuUsage(cpuAtStart);
      writeFileSync(
        path.join(dir, `alloc-${process.pid}.json`),
        JSON.stringify({ windowMs, cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000, collections }),
      );
    });
  }, windowMs).unref();
}, startMs).unref();
