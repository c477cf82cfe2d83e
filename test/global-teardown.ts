type Stoppable = { stop(): Promise<unknown> };

export default async function globalTeardown(): Promise<void> {
  const containers = (globalThis as { __tallyContainers?: Stoppable[] }).__tallyContainers ?? [];
  await Promise.all(containers.map((container) => container.stop()));
}
