import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256 of a UTF-8 string, hex. Secrets are stored and looked up only by this hash. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * Constant-time equality of two strings: the time depends only on their byte length, never on
 * where they differ. Unequal lengths answer false at once; every secret compared here (a stored
 * hash against the hash of what was presented, a token of a fixed format) has a fixed, public
 * length.
 */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
