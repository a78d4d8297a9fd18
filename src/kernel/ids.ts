import { randomFillSync } from 'node:crypto';

/**
 * Random bytes for ids, tokens and nonces come from one pooled buffer refilled from the CSPRNG
 * 8 KiB at a time (one system call per ~400 ids instead of one each, like Node's own
 * randomUUID). Every byte is handed out once and zeroed as it leaves the pool.
 */
const POOL_SIZE = 8192;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;

function take(n: number): number {
  if (n > POOL_SIZE) throw new RangeError(`at most ${POOL_SIZE} random bytes at once`);
  if (offset + n > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const start = offset;
  offset += n;
  return start;
}

/** `n` fresh random bytes as base64url (tokens, nonces, jti). */
export function randomBase64url(n: number): string {
  const start = take(n);
  const out = pool.toString('base64url', start, start + n);
  pool.fill(0, start, start + n);
  return out;
}

const CROCKFORD = Buffer.from('0123456789abcdefghjkmnpqrstvwxyz', 'latin1');
/** 128 bits in base32: 26 characters. Scratch space for newId, reused (JavaScript runs one call at a time). */
const ID_BYTES = new Uint8Array(16);
const ID_CHARS = Buffer.alloc(26);

function base32(bytes: Uint8Array, out: Buffer): string {
  let bits = 0;
  let value = 0;
  let o = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      out[o++] = CROCKFORD[(value >>> (bits - 5)) & 31]!;
      bits -= 5;
    }
  }
  if (bits > 0) out[o++] = CROCKFORD[(value << (5 - bits)) & 31]!;
  return out.toString('latin1', 0, o);
}

/**
 * A public identifier: prefix + 48-bit millisecond timestamp + 80 random bits, Crockford base32
 * (26 characters). Ids made later sort after ids made earlier (to the millisecond), so an id can
 * serve as a pagination cursor.
 */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  const bytes = ID_BYTES;
  let t = nowMs;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  const start = take(10);
  bytes.set(pool.subarray(start, start + 10), 6);
  pool.fill(0, start, start + 10);
  const id = `${prefix}_${base32(bytes, ID_CHARS)}`;
  bytes.fill(0, 6);
  return id;
}

/** A secret with 256 bits of entropy, base64url, behind a recognisable prefix (`sk_live_`). */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBase64url(32)}`;
}
