import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether `presented` equals one of `accepted`, in constant time. Both sides are hashed first so
 * the comparison takes the same time whatever the lengths, and every accepted value is compared
 * (no early exit) so timing does not tell which one matched. Used for webhook Authorization
 * values and API bearer keys, which rotate as lists.
 */
export function matchesAnySecret(presented: string | undefined, accepted: readonly string[]): boolean {
  if (presented === undefined || accepted.length === 0) return false;
  const presentedHash = createHash('sha256').update(presented).digest();
  let matched = false;
  for (const value of accepted) {
    const expected = createHash('sha256').update(value).digest();
    matched = timingSafeEqual(presentedHash, expected) || matched;
  }
  return matched;
}
