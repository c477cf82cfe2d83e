/**
 * `WALLET_LOW_BALANCE_THRESHOLD`, set once by each composition root that posts ledger entries
 * (api and worker) before it serves anything; undefined (the default): no `wallet.balance_low`.
 *
 * A process setting rather than a parameter on purpose: postLedgerEntry has seven callers across
 * four composition paths (inbox handlers, installments, studio, top-ups), and threading one
 * number through all of them is how one of them would forget it. The wallet.* messages need no
 * setting at all; only the crossing check reads this.
 */
let threshold: number | undefined;

export function setWalletLowBalanceThreshold(value: number | undefined): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) {
    throw new RangeError(`the low-balance threshold must be a positive whole number of tokens, got ${value}`);
  }
  threshold = value;
}

export function walletLowBalanceThreshold(): number | undefined {
  return threshold;
}
