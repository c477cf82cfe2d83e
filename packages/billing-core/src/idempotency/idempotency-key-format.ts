/** `Idempotency-Key`: 1 to 255 visible ASCII characters (VCHAR, 0x21 to 0x7E); the table checks it too. */
export const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

export function isValidIdempotencyKey(key: string): boolean {
  return idempotencyKeyPattern.test(key);
}
