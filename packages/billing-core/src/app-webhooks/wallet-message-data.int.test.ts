import { readFileSync } from 'node:fs';
import path from 'node:path';
import { useDatabase } from '@tally/platform/testing';
import { plainLots, postLedgerEntry } from '../ledger/post-ledger-entry';
import { createTestDatabase } from '../testing/test-services';
import type { AppWebhookOutbox } from '../unit-of-work/app-webhook-outbox';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import {
  walletBalanceLowDataSchema,
  walletCreditsExpiredDataSchema,
  walletCreditsExpiringDataSchema,
  walletEntryDataSchema,
} from './app-webhook-message-types';

/** The fields docs/app-webhooks.md lists for a message type ("What is sent": its third column). */
function documentedFields(type: string): string[] {
  const doc = readFileSync(path.resolve(__dirname, '../../../../docs/app-webhooks.md'), 'utf8');
  const row = doc.split('\n').find((line) => line.startsWith(`| \`${type}\``));
  if (!row) throw new Error(`docs/app-webhooks.md has no row for ${type}`);
  const fields = (row.split(' | ')[2] ?? '').replace(/\([^)]*\)/g, '');
  return [...fields.matchAll(/`([^`]+)`/g)].flatMap((match) => (match[1] ?? '').split(',').map((f) => f.trim()));
}

describe('the wallet.* messages postLedgerEntry writes in SQL', () => {
  const database = useDatabase(createTestDatabase);

  const outbox: AppWebhookOutbox = { lowBalanceThreshold: 50, handOff: undefined };
  const post = (userId: string, reference: string, amount: number, reason: string) =>
    inUnitOfWork({ db: database.db, outbox }, (uow) =>
      postLedgerEntry(uow, { userId, reference, amount, reason, lots: plainLots(amount) }),
    );
  /** The user's app webhook messages, in the order they were written. */
  const messagesOf = (userId: string) =>
    database.db
      .selectFrom('app_webhook_messages')
      .select(['type', 'ledger_entry_id', 'data'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();

  it('hold every payload to the TypeScript schema of its type, with the ledger entry it announces', async () => {
    const userId = 'wallet-data-user';
    await post(userId, 'test:wallet:credit', 100, 'token_pack_purchase');
    await post(userId, 'test:wallet:debit:1', -30, 'studio_generation');
    // 70 → 30 crosses the threshold of 50: wallet.debited, then wallet.balance_low.
    await post(userId, 'test:wallet:debit:2', -40, 'studio_generation');
    // A replay writes nothing; 30 → 0 starts below the threshold: no second balance_low.
    await post(userId, 'test:wallet:credit', 100, 'token_pack_purchase');
    await post(userId, 'test:wallet:debit:3', -30, 'stripe_refund');

    const entries = await database.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
    const messages = await messagesOf(userId);

    const entryMessage = (index: number) => {
      const entry = entries[index];
      if (!entry) throw new Error(`no ledger entry ${index}`);
      return {
        type: entry.amount > 0 ? 'wallet.credited' : 'wallet.debited',
        ledger_entry_id: entry.id,
        data: {
          userId,
          reference: entry.reference,
          amount: entry.amount,
          balanceBefore: entry.balance_before,
          balanceAfter: entry.balance_after,
          reason: entry.reason,
          createdAt: expect.any(String),
        },
      };
    };
    expect(entries.map((entry) => [entry.reference, entry.amount, entry.balance_after])).toEqual([
      ['test:wallet:credit', 100, 100],
      ['test:wallet:debit:1', -30, 70],
      ['test:wallet:debit:2', -40, 30],
      ['test:wallet:debit:3', -30, 0],
    ]);
    expect(messages).toEqual([
      entryMessage(0),
      entryMessage(1),
      entryMessage(2),
      { type: 'wallet.balance_low', ledger_entry_id: null, data: { userId, balance: 30, threshold: 50 } },
      entryMessage(3),
    ]);

    for (const message of messages) {
      const schema = message.type === 'wallet.balance_low' ? walletBalanceLowDataSchema : walletEntryDataSchema;
      const parsed = schema.safeParse(message.data);
      expect({ type: message.type, issues: parsed.error?.issues ?? [] }).toEqual({ type: message.type, issues: [] });
    }
    // createdAt is the entry's created_at (to the millisecond; both sides truncate the microseconds).
    for (const [index, message] of messages.filter((m) => m.ledger_entry_id !== null).entries()) {
      const createdAt = Date.parse((message.data as { createdAt: string }).createdAt);
      expect(Math.abs(createdAt - (entries[index]?.created_at.getTime() ?? Number.NaN))).toBeLessThanOrEqual(1);
    }
  });

  it('announce an expiry entry as wallet.credits_expired (its lot, no wallet.debited), held to its schema', async () => {
    const userId = 'wallet-expired-user';
    await post(userId, 'test:wallet:expiring-credit', 100, 'subscription_period');
    const lot = await database.db
      .selectFrom('credit_lots')
      .select('id')
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    const reference = `lot:${lot.id}:expired`;
    await inUnitOfWork({ db: database.db, outbox }, (uow) =>
      postLedgerEntry(uow, {
        userId,
        reference,
        amount: -60,
        reason: 'credits_expired',
        lots: { kind: 'expire', lotId: lot.id },
      }),
    );
    const entry = await database.db
      .selectFrom('ledger_entries')
      .select('id')
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    const messages = await messagesOf(userId);
    expect(messages.slice(1)).toEqual([
      {
        type: 'wallet.credits_expired',
        ledger_entry_id: entry.id,
        data: { userId, lotId: lot.id, amount: -60, balanceAfter: 40, reference },
      },
      // 100 → 40 crosses the threshold of 50.
      { type: 'wallet.balance_low', ledger_entry_id: null, data: { userId, balance: 40, threshold: 50 } },
    ]);
    expect(walletCreditsExpiredDataSchema.safeParse(messages[1]?.data).error?.issues ?? []).toEqual([]);
  });

  it('are documented with exactly the schema fields in docs/app-webhooks.md', () => {
    const entryFields = Object.keys(walletEntryDataSchema.shape).sort();
    expect(documentedFields('wallet.credited').sort()).toEqual(entryFields);
    expect(documentedFields('wallet.balance_low').sort()).toEqual(Object.keys(walletBalanceLowDataSchema.shape).sort());
    expect(documentedFields('wallet.credits_expiring').sort()).toEqual(
      Object.keys(walletCreditsExpiringDataSchema.shape).sort(),
    );
    expect(documentedFields('wallet.credits_expired').sort()).toEqual(
      Object.keys(walletCreditsExpiredDataSchema.shape).sort(),
    );
  });
});
