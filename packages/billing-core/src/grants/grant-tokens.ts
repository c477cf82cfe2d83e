import { sql } from 'kysely';
import { LedgerReferenceConflictError } from '../errors';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

/** A grant of promotional tokens (docs/lots.md "Grants"): from the app or from support. */
export interface TokenGrant {
  /** The canonical user. */
  userId: string;
  /** The ledger reference (`references.grant` or `references.adminGrant`): the grant's fence. */
  reference: string;
  /** Whole tokens, positive. */
  amount: number;
  /** The ledger reason, e.g. `grant` or `admin_grant`. */
  reason: string;
  /** When the lot expires; null: never. */
  expiresAt: Date | null;
  /** Settles the wallet's debt first, as a paid credit does (docs/debt.md); promotional grants do not by default. */
  settlesDebt?: boolean;
}

export interface GrantAnswer {
  ledgerReference: string;
  lotId: number;
  amount: number;
  expiresAt: string | null;
  /** The balance right after the grant and what it settled (the same answer on every retry). */
  balance: number;
  /** What of the grant settled the wallet's debt (`debt:{reference}:settled`; 0 without `settlesDebt`). */
  debtSettled: number;
}

export type GrantResult =
  | { kind: 'granted'; answer: GrantAnswer }
  /** The reference granted the same before: nothing granted now, the first answer. */
  | { kind: 'already-granted'; answer: GrantAnswer }
  /** The reference granted another amount, expiry or user: the caller's conflict (409). */
  | { kind: 'conflict'; message: string };

/**
 * Grants `amount` promotional tokens as one lot under the grant's reference, in the caller's unit
 * of work. The reference is the fence: postLedgerEntry locks the wallet and inserts under the
 * unique reference, so a retry or a concurrent twin finds the first entry and grants nothing; it
 * then answers the first grant when the amount and expiry are the same, and a conflict otherwise.
 * A conflict is an answer (not LedgerReferenceConflictError): it is the caller's reuse of a
 * reference, not two code paths disagreeing.
 */
export async function grantTokens(uow: UnitOfWork, grant: TokenGrant): Promise<GrantResult> {
  let posted: Awaited<ReturnType<typeof postLedgerEntry>>;
  try {
    posted = await postLedgerEntry(uow, {
      userId: grant.userId,
      reference: grant.reference,
      amount: grant.amount,
      reason: grant.reason,
      lots: { kind: 'credit', category: 'promotional', expiresAt: grant.expiresAt },
      settlesDebt: grant.settlesDebt === true,
    });
  } catch (error) {
    // guard: grant-reference-conflict
    if (error instanceof LedgerReferenceConflictError && error.reference === grant.reference) {
      return { kind: 'conflict', message: `reference ${grant.reference} already granted another amount or user` };
    }
    throw error;
  }
  const lot = await sql<{
    id: number;
    expires_at: Date | null;
    settled: number | null;
    settled_balance: number | null;
  }>`
    SELECT l.id, l.expires_at, -s.amount AS settled, s.balance_after AS settled_balance
      FROM credit_lots l
      LEFT JOIN ledger_entries s ON s.reference = ${references.debtSettled(grant.reference)}
     WHERE l.source = ${grant.reference}`.execute(uow.trx);
  const row = lot.rows[0];
  if (!row) throw new Error(`grant ${grant.reference} has no lot`);
  const expiresAt = row.expires_at === null ? null : new Date(row.expires_at);
  const answer: GrantAnswer = {
    ledgerReference: grant.reference,
    lotId: Number(row.id),
    amount: posted.entry.amount,
    expiresAt: expiresAt?.toISOString() ?? null,
    balance: Number(row.settled_balance ?? posted.entry.balance_after),
    debtSettled: Number(row.settled ?? 0),
  };
  if (posted.kind === 'posted') return { kind: 'granted', answer };
  // guard: grant-expiry-mismatch
  if ((expiresAt?.getTime() ?? null) !== (grant.expiresAt?.getTime() ?? null)) {
    return { kind: 'conflict', message: `reference ${grant.reference} already granted with another expiry` };
  }
  return { kind: 'already-granted', answer };
}
