import { type InboxHandlers, InvalidEventError } from '@tally/billing-core';
import { withProviderRead } from './engine';
import { revenueCatTokenPurchase } from './events';
import { eventually, type TestStack } from './stack';

/**
 * Starts a worker whose RevenueCat handler fails for good until `fix()` is called (a bug
 * deployed, then corrected), so events sent meanwhile end up parked (`failed`, invalid_event).
 */
export function startBrokenRevenueCatWorker(stack: TestStack): { fix(): void } {
  const real = stack.handlers();
  const state = { broken: true };
  const handlers: InboxHandlers = {
    ...real,
    revenuecat: {
      // A provider read: every attempt goes through the broken prepare.
      prepare: withProviderRead(real.revenuecat, async () => {
        if (state.broken) throw new InvalidEventError('simulated handler bug');
      }),
      apply: real.revenuecat.apply,
    },
  };
  stack.startWorker({ handlers });
  return {
    fix() {
      state.broken = false;
    },
  };
}

/** Sends a RevenueCat token purchase and waits until the (broken) worker has parked it; returns its inbox id. */
export async function parkTokenPurchase(stack: TestStack, providerEventId: string, userId: string): Promise<number> {
  const response = await stack.postRevenueCat(revenueCatTokenPurchase({ id: providerEventId, userId }));
  if (response.status !== 200) throw new Error(`RevenueCat delivery answered ${response.status}`);
  const row = await eventually(`event ${providerEventId} to be parked`, async () => {
    const [current] = await stack.inboxRows('revenuecat', providerEventId);
    return current?.status === 'failed' ? current : undefined;
  });
  return row.id;
}

export const basicAuth = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
