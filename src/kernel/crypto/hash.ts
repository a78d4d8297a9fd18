import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256 of a UTF-8 string, hex. Secrets are stored and looked up only by this hash. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * Constant-time equality of two strings. The inputs are hashed first, so the comparison takes
 * the same time whatever their lengths.
 */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
