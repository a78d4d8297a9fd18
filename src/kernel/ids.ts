import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += CROCKFORD[(value << (5 - bits)) & 31];
  return out;
}

/**
 * A public identifier: prefix + 48-bit millisecond timestamp + 80 random bits, Crockford base32
 * (26 characters). Ids made later sort after ids made earlier (to the millisecond), so an id can
 * serve as a pagination cursor.
 */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  const bytes = new Uint8Array(16);
  let t = nowMs;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes.set(randomBytes(10), 6);
  return `${prefix}_${base32(bytes)}`;
}

/** A secret with 256 bits of entropy, base64url, behind a recognisable prefix (`sk_live_`). */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}
