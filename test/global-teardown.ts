import { rmSync } from 'node:fs';
import { reportOpenApiCoverage } from './support/openapi-coverage';

type Stoppable = { stop(): Promise<unknown> };

export default async function globalTeardown(): Promise<void> {
  const containers = (globalThis as { __tallyContainers?: Stoppable[] }).__tallyContainers ?? [];
  await Promise.all(containers.map((container) => container.stop()));
  const seen = process.env.TALLY_OPENAPI_SEEN_DIR;
  if (seen) {
    try {
      reportOpenApiCoverage(seen, process.env.TALLY_OPENAPI_COVERAGE === 'required');
    } finally {
      rmSync(seen, { recursive: true, force: true });
    }
  }
}
