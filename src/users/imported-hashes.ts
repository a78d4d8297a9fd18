/**
 * Password hashes made elsewhere (an import), verified until the user's next successful sign-in
 * replaces them with today's argon2id (docs/import-export.md). Each is stored in the users'
 * `password_hash` column as one self-describing string, so it needs nothing else to verify and
 * an export carries it as it is:
 *
 * - `$argon2id$…` / `$argon2i$…` (PHC), verified by @node-rs/argon2;
 * - `$2a$` / `$2b$` / `$2y$` bcrypt, verified by bcryptjs;
 * - `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>` (the PHC form of passlib and Zitadel);
 * - `$firebase-scrypt$ln=<mem cost>,r=<rounds>,key=<signer key>,sep=<salt separator>$<salt>$<hash>`;
 * - `$pbkdf2-sha1|sha256|sha512$i=<iterations>$<salt>$<hash>` (Keycloak, Django after conversion);
 * - `$salted-sha256|sha512$pos=prefix|suffix$<salt>$<hash>`: legacy, accepted at import only behind
 *   an explicit flag.
 *
 * Salts, keys and hashes are standard base64 (padding optional). Every format's cost is bounded
 * (MAX_COST), so a stored hash cannot make a sign-in attempt arbitrarily expensive. Derived bytes
 * are compared with timingSafeEqual; nothing here logs.
 */
import { createCipheriv, createHash, pbkdf2, scrypt, timingSafeEqual } from 'node:crypto';
import { verify as argon2Verify } from '@node-rs/argon2';
import bcrypt from 'bcryptjs';

export type HashFormat =
  'argon2id' | 'argon2i' | 'bcrypt' | 'scrypt' | 'firebase-scrypt' | 'pbkdf2-sha1' | 'pbkdf2-sha256' | 'pbkdf2-sha512' | 'salted-sha256' | 'salted-sha512';

/** The most any stored hash may cost to check. */
export const MAX_COST = {
  bcryptCost: 15,
  pbkdf2Iterations: 5_000_000,
  /** bytes: 128 · N · r for scrypt, KiB · 1024 for argon2. */
  memoryBytes: 256 * 1024 * 1024,
  argon2Passes: 16,
} as const;

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;
const b64 = (s: string): Buffer | undefined => (B64.test(s) && s.length > 0 ? Buffer.from(s, 'base64') : undefined);
const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;
const ARGON2 = /^\$(argon2id|argon2i)\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;

/** `a=1,b=2` → {a: '1', b: '2'} (undefined when malformed). */
function params(s: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const part of s.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

const int = (s: string | undefined, min: number, max: number): number | undefined => {
  if (s === undefined || !/^\d{1,10}$/.test(s)) return undefined;
  const n = Number(s);
  return n >= min && n <= max ? n : undefined;
};

type Checker = (password: string) => Promise<boolean>;

interface Parsed {
  format: HashFormat;
  check: Checker;
}

const same = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

const pbkdf2Async = (password: string, salt: Buffer, iterations: number, length: number, digest: string) =>
  new Promise<Buffer>((resolve, reject) => pbkdf2(password, salt, iterations, length, digest, (err, key) => (err ? reject(err) : resolve(key))));

const scryptAsync = (password: string, salt: Buffer, length: number, o: { N: number; r: number; p: number }) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(password, salt, length, { ...o, maxmem: MAX_COST.memoryBytes + 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );

/** The three `$`-separated fields after the format name: params, salt, hash. */
function fields(stored: string, name: string): { p: Record<string, string>; salt: Buffer; hash: Buffer } | undefined {
  const parts = stored.split('$');
  if (parts.length !== 5 || parts[0] !== '' || parts[1] !== name) return undefined;
  const p = params(parts[2]!);
  const salt = b64(parts[3]!);
  const hash = b64(parts[4]!);
  if (!p || !salt || !hash || hash.length < 16 || hash.length > 128 || salt.length > 1024) return undefined;
  return { p, salt, hash };
}

function parseArgon2(stored: string): Parsed | undefined {
  const m = ARGON2.exec(stored);
  if (!m) return undefined;
  const memKiB = Number(m[2]);
  const passes = Number(m[3]);
  if (memKiB * 1024 > MAX_COST.memoryBytes || passes > MAX_COST.argon2Passes || Number(m[4]) > 16) return undefined;
  return { format: m[1] as HashFormat, check: (pw) => argon2Verify(stored, pw).catch(() => false) };
}

function parseBcrypt(stored: string): Parsed | undefined {
  const m = BCRYPT.exec(stored);
  if (!m || Number(m[1]) < 4 || Number(m[1]) > MAX_COST.bcryptCost) return undefined;
  // bcryptjs checks $2y$ as $2b$ (the same algorithm); its comparison is constant-time.
  return { format: 'bcrypt', check: (pw) => bcrypt.compare(pw, stored).catch(() => false) };
}

function parseScrypt(stored: string): Parsed | undefined {
  const f = fields(stored, 'scrypt');
  if (!f) return undefined;
  const ln = int(f.p.ln, 1, 30);
  const r = int(f.p.r, 1, 64);
  const p = int(f.p.p, 1, 16);
  if (ln === undefined || r === undefined || p === undefined || 128 * 2 ** ln * r > MAX_COST.memoryBytes) return undefined;
  return { format: 'scrypt', check: async (pw) => same(await scryptAsync(pw, f.salt, f.hash.length, { N: 2 ** ln, r, p }), f.hash) };
}

/**
 * Firebase's modified scrypt (github.com/firebase/scrypt): scrypt(password, salt ‖ separator,
 * N = 2^mem cost, r = rounds, p = 1) gives a key; the hash is the project's signer key encrypted
 * with AES-256-CTR under the key's first 32 bytes and a zero IV.
 */
function parseFirebase(stored: string): Parsed | undefined {
  const f = fields(stored, 'firebase-scrypt');
  if (!f) return undefined;
  const ln = int(f.p.ln, 1, 20);
  const r = int(f.p.r, 1, 64);
  const key = f.p.key === undefined ? undefined : b64(f.p.key);
  const sep = f.p.sep === undefined ? Buffer.alloc(0) : b64(f.p.sep);
  if (ln === undefined || r === undefined || !key || !sep || 128 * 2 ** ln * r > MAX_COST.memoryBytes || key.length > 256) return undefined;
  return {
    format: 'firebase-scrypt',
    check: async (pw) => {
      const derived = await scryptAsync(pw, Buffer.concat([f.salt, sep]), 64, { N: 2 ** ln, r, p: 1 });
      const cipher = createCipheriv('aes-256-ctr', derived.subarray(0, 32), Buffer.alloc(16));
      return same(Buffer.concat([cipher.update(key), cipher.final()]), f.hash);
    },
  };
}

function parsePbkdf2(stored: string, digest: 'sha1' | 'sha256' | 'sha512'): Parsed | undefined {
  const f = fields(stored, `pbkdf2-${digest}`);
  if (!f) return undefined;
  const i = int(f.p.i, 1, MAX_COST.pbkdf2Iterations);
  if (i === undefined) return undefined;
  return { format: `pbkdf2-${digest}`, check: async (pw) => same(await pbkdf2Async(pw, f.salt, i, f.hash.length, digest), f.hash) };
}

function parseSaltedSha(stored: string, digest: 'sha256' | 'sha512'): Parsed | undefined {
  const f = fields(stored, `salted-${digest}`);
  if (!f || (f.p.pos !== 'prefix' && f.p.pos !== 'suffix')) return undefined;
  const pos = f.p.pos;
  return {
    format: `salted-${digest}`,
    check: async (pw) => {
      const h = createHash(digest);
      if (pos === 'prefix') h.update(f.salt).update(pw, 'utf8');
      else h.update(pw, 'utf8').update(f.salt);
      return same(h.digest(), f.hash);
    },
  };
}

/** The format and checker of a stored hash, or undefined when it is none Keyhall reads (or costs too much). */
export function parseStoredHash(stored: string): Parsed | undefined {
  if (stored.length > 2048) return undefined;
  if (stored.startsWith('$argon2')) return parseArgon2(stored);
  if (stored.startsWith('$2')) return parseBcrypt(stored);
  if (stored.startsWith('$scrypt$')) return parseScrypt(stored);
  if (stored.startsWith('$firebase-scrypt$')) return parseFirebase(stored);
  if (stored.startsWith('$pbkdf2-sha1$')) return parsePbkdf2(stored, 'sha1');
  if (stored.startsWith('$pbkdf2-sha256$')) return parsePbkdf2(stored, 'sha256');
  if (stored.startsWith('$pbkdf2-sha512$')) return parsePbkdf2(stored, 'sha512');
  if (stored.startsWith('$salted-sha256$')) return parseSaltedSha(stored, 'sha256');
  if (stored.startsWith('$salted-sha512$')) return parseSaltedSha(stored, 'sha512');
  return undefined;
}

/** The format of a stored hash ('argon2id' for Keyhall's own), undefined when unreadable. */
export const hashFormat = (stored: string): HashFormat | undefined => parseStoredHash(stored)?.format;

/** Whether `password` matches a stored hash of any readable format; unreadable is a mismatch. */
export async function verifyStoredHash(stored: string, password: string): Promise<boolean> {
  const parsed = parseStoredHash(stored);
  if (!parsed) return false;
  try {
    return await parsed.check(password);
  } catch {
    return false;
  }
}

const LEGACY: readonly HashFormat[] = ['salted-sha256', 'salted-sha512'];

export type NormalizedHash = { ok: true; stored: string; format: HashFormat } | { ok: false; reason: 'unknown_hash_format' | 'legacy_hash_not_allowed' };

const enc = (b: Buffer) => b.toString('base64').replace(/=+$/, '');

/**
 * A hash as an import file gives it (a stored form above, or Django's `pbkdf2_sha256$…` /
 * `pbkdf2_sha1$…`) → the string to store. Legacy salted SHA only with `allowLegacy`.
 */
export function normalizeImportedHash(input: string, o: { allowLegacy: boolean }): NormalizedHash {
  let stored = input.trim();
  const django = /^pbkdf2_(sha1|sha256)\$(\d{1,10})\$([^$]{1,256})\$([A-Za-z0-9+/]+={0,2})$/.exec(stored);
  // Django's salt is text, used as its UTF-8 bytes.
  if (django) stored = `$pbkdf2-${django[1]}$i=${django[2]}$${enc(Buffer.from(django[3]!, 'utf8'))}$${django[4]}`;
  const parsed = parseStoredHash(stored);
  if (!parsed) return { ok: false, reason: 'unknown_hash_format' };
  if (LEGACY.includes(parsed.format) && !o.allowLegacy) return { ok: false, reason: 'legacy_hash_not_allowed' };
  return { ok: true, stored, format: parsed.format };
}

/** Firebase's per-project hash parameters (Authentication → Users → Password hash parameters). */
export interface FirebaseHashConfig {
  signerKey: string;
  saltSeparator: string;
  rounds: number;
  memCost: number;
}

/** A Firebase user's passwordHash and salt (base64) with the project's parameters → the stored form. */
export const firebaseStored = (hash: string, salt: string, c: FirebaseHashConfig) =>
  `$firebase-scrypt$ln=${c.memCost},r=${c.rounds},key=${c.signerKey.replace(/=+$/, '')},sep=${c.saltSeparator.replace(/=+$/, '')}$${salt.replace(/=+$/, '')}$${hash.replace(/=+$/, '')}`;

/** Keycloak's credential (secretData {value, salt}, credentialData {hashIterations, algorithm}) → the stored form. */
export function keycloakStored(value: string, salt: string, iterations: number, algorithm: string): string | undefined {
  const digest = { pbkdf2: 'sha1', 'pbkdf2-sha256': 'sha256', 'pbkdf2-sha512': 'sha512' }[algorithm];
  if (!digest) return undefined;
  return `$pbkdf2-${digest}$i=${iterations}$${salt.replace(/=+$/, '')}$${value.replace(/=+$/, '')}`;
}
