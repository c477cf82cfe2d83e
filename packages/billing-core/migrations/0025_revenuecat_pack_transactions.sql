-- One credit per RevenueCat store transaction, whatever REVENUECAT_VERIFY_PURCHASES says (issue 30).
-- 0014's table held only the transactions RevenueCat's REST read had confirmed, so with
-- verification off the same store transaction delivered under two event ids credited twice. It
-- now holds every credited token pack, with whether the read confirmed it, and it is the one
-- fence: the primary key on the store transaction, written in the crediting transaction. Keyed by
-- the transaction alone (no store or environment): the key must hold nothing a forged body could
-- vary to make a second credit. A refund finds its credit here, by transaction.
ALTER TABLE revenuecat_verified_purchases RENAME TO revenuecat_pack_transactions;
ALTER TABLE revenuecat_pack_transactions
  RENAME CONSTRAINT revenuecat_verified_purchases_pkey TO revenuecat_pack_transactions_pkey;
ALTER TABLE revenuecat_pack_transactions
  RENAME CONSTRAINT revenuecat_verified_purchases_transaction_ck TO revenuecat_pack_transactions_transaction_ck;
ALTER TABLE revenuecat_pack_transactions
  RENAME CONSTRAINT revenuecat_verified_purchases_user_fk TO revenuecat_pack_transactions_user_fk;
ALTER TABLE revenuecat_pack_transactions
  RENAME CONSTRAINT revenuecat_verified_purchases_inbox_event_fk TO revenuecat_pack_transactions_inbox_event_fk;
-- Rows so far were all confirmed by the read; new rows say which they are.
ALTER TABLE revenuecat_pack_transactions ADD COLUMN verified boolean NOT NULL DEFAULT true;
ALTER TABLE revenuecat_pack_transactions ALTER COLUMN verified DROP DEFAULT;

-- Token packs credited from the body alone before this migration (no row yet): the first credit
-- of each store transaction its stored body names. A body that is not readable JSON (or was
-- pruned) is skipped: its refund finds no credit and waits, as it would for a missing purchase.
DO $$
DECLARE
  credit record;
  body jsonb;
  transaction_id text;
BEGIN
  FOR credit IN
    SELECT l.reference, l.user_id, l.inbox_event_id, i.raw_body
      FROM ledger_entries l
      JOIN inbox_events i ON i.id = l.inbox_event_id
     WHERE l.reason = 'token_pack_purchase' AND i.provider = 'revenuecat' AND i.raw_body IS NOT NULL
     ORDER BY l.id
  LOOP
    BEGIN
      body := credit.raw_body::jsonb;
    EXCEPTION WHEN others THEN
      CONTINUE;
    END;
    transaction_id := body -> 'event' ->> 'transaction_id';
    IF transaction_id IS NOT NULL AND length(transaction_id) BETWEEN 1 AND 255 THEN
      INSERT INTO revenuecat_pack_transactions
        (store_transaction_id, user_id, product_id, ledger_reference, inbox_event_id, verified)
      VALUES
        (transaction_id, credit.user_id, coalesce(body -> 'event' ->> 'product_id', ''), credit.reference,
         credit.inbox_event_id, false)
      ON CONFLICT (store_transaction_id) DO NOTHING;
    END IF;
  END LOOP;
END $$;
