// The capacity model of docs/scaling.md as arithmetic on measured per-event costs: what one core
// of ingest, one worker process and one Postgres core carry, what N ingest and M worker replicas
// need from Postgres, and the drain rate it predicts for a number of workers on a given machine.
import { round } from './stats.mjs';
import { loadWorkerConfig } from './workspace.mjs';

const workerConfig = loadWorkerConfig();

/**
 * The pool each process opens at most at its defaults (docs/scaling.md, connection budget): the
 * worker's from its own formula (apps/worker/src/config.ts workerPoolSize), 144.
 */
export const clientPool = {
  ingest: 10,
  worker: workerConfig.workerPoolSize(
    workerConfig.workerEnvSchema.parse({ DATABASE_URL: 'postgres://localhost/tally', REDIS_URL: 'redis://localhost' }),
  ),
};

/**
 * Per-core figures of one flow from its measured costs (milliseconds per event):
 * `ingestCpuMs`, `workerCpuMs` (the processes'), `ingestPostgresMs`, `drainPostgresMs` (the
 * cluster's CPU), `ingestConnectionMs`, `drainConnectionMs` (time a server connection was inside
 * a statement or transaction, per event), `ingestRedisMs`, `drainRedisMs`; and the server
 * connections one replica kept busy at its maximum (`ingestBusyConnections`,
 * `workerBusyConnections`: means of the samples).
 */
export function perCore(costs) {
  const postgresMs = costs.ingestPostgresMs + costs.drainPostgresMs;
  return {
    ingestEventsPerCore: round(1000 / costs.ingestCpuMs),
    workerEventsPerCore: round(1000 / costs.workerCpuMs),
    postgresMsPerEvent: round(postgresMs, 3),
    eventsPerPostgresCore: round(1000 / postgresMs),
    connectionMsPerEvent: round(costs.ingestConnectionMs + costs.drainConnectionMs, 3),
    ingestBusyConnections: costs.ingestBusyConnections,
    workerBusyConnections: costs.workerBusyConnections,
    redisMsPerEvent: round(costs.ingestRedisMs + costs.drainRedisMs, 3),
  };
}

/**
 * What `ingest` ingest replicas and `workers` worker replicas (one core each) carry and need
 * from Postgres at that rate: the throughput is the smaller of the two sides' ceilings; Postgres
 * cores at `utilization` (0.7: headroom for bursts, vacuum, checkpoints); server connections
 * busy on average: what each replica kept busy at its maximum (a worker holds a connection for
 * each job inside its transaction, so at most its concurrency; the rate × connection time per
 * event would scale the loaded machine's long transactions up with the rate), against the
 * clients' pools.
 */
export function deploymentNeeds({ ingest, workers, figures, utilization = 0.7 }) {
  const throughput = Math.min(ingest * figures.ingestEventsPerCore, workers * figures.workerEventsPerCore);
  return {
    ingest,
    workers,
    eventsPerSecond: round(throughput),
    postgresCores: round((throughput * figures.postgresMsPerEvent) / 1000 / utilization, 1),
    serverConnectionsBusy: round(ingest * figures.ingestBusyConnections + workers * figures.workerBusyConnections),
    clientConnections: ingest * clientPool.ingest + workers * clientPool.worker,
  };
}

/**
 * The drain rate the model predicts for `workers` processes on one machine: each process as fast
 * as one was measured (`oneWorkerEventsPerSecond`), until the CPU the machine leaves to the run
 * (`availableCores`) is used up at `cpuMsPerEvent` (worker + Postgres, measured with one worker).
 */
export function predictDrain({ workers, oneWorkerEventsPerSecond, cpuMsPerEvent, availableCores }) {
  const byWorkers = workers * oneWorkerEventsPerSecond;
  const byCpu = (availableCores * 1000) / cpuMsPerEvent;
  return { eventsPerSecond: round(Math.min(byWorkers, byCpu)), byWorkers: round(byWorkers), byCpu: round(byCpu) };
}
