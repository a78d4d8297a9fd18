import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM envelope encryption. Each value gets its own random data key; the data key is
 * wrapped under the master key. Both layers bind `context` as additional authenticated data, so a
 * ciphertext moved to another row (another context) fails to decrypt.
 *
 * Format: `v1.<wrapped data key>.<ciphertext>`, each part base64url of iv(12) | data | tag(16).
 */
const VERSION = 'v1';

function seal(key: Buffer, plaintext: Buffer, aad: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

function open(key: Buffer, sealed: string, aad: Buffer): Buffer {
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length < 28) throw new EnvelopeError('ciphertext too short');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(aad);
  decipher.setAuthTag(raw.subarray(raw.length - 16));
  try {
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
  } catch {
    throw new EnvelopeError('decryption failed (wrong master key or tampered data)');
  }
}

export class EnvelopeError extends Error {}

export class Envelope {
  readonly #masterKey: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new EnvelopeError('master key must be 32 bytes');
    this.#masterKey = Buffer.from(masterKey);
  }

  encrypt(plaintext: string, context: string): string {
    const aad = Buffer.from(context, 'utf8');
    const dataKey = randomBytes(32);
    const wrapped = seal(this.#masterKey, dataKey, aad);
    const body = seal(dataKey, Buffer.from(plaintext, 'utf8'), aad);
    dataKey.fill(0);
    return `${VERSION}.${wrapped}.${body}`;
  }

  decrypt(value: string, context: string): string {
    const [version, wrapped, body, extra] = value.split('.');
    if (version !== VERSION || !wrapped || !body || extra !== undefined) {
      throw new EnvelopeError('unknown envelope format');
    }
    const aad = Buffer.from(context, 'utf8');
    const dataKey = open(this.#masterKey, wrapped, aad);
    try {
      return open(dataKey, body, aad).toString('utf8');
    } finally {
      dataKey.fill(0);
    }
  }
}
