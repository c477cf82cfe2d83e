import { createHash } from 'node:crypto';

/**
 * Which admin key was used, without the key: the first 12 hex digits of its SHA-256. Enough to
 * tell rotated keys apart (and to find a key's rows once it leaked), useless to recover the key.
 */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 12);
}
