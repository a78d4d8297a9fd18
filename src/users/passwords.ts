/**
 * Passwords: argon2id with today's parameters in one place. A stored hash made with other
 * parameters (an earlier default, an import) still verifies, and is replaced by one with today's
 * parameters at the next successful sign-in (`upgradeHash`).
 */
import { type Algorithm, hash, parseOptions, verify, type Version } from '@node-rs/argon2';
import { currentPasswordSetBy, passwordTag, type UserRecord, type UserRepo } from '../storage/repos/users.js';
import { type HashFormat, hashFormat, verifyStoredHash } from './imported-hashes.js';

// Algorithm.Argon2id and Version.V0x13: @node-rs/argon2 declares them as const enums, which
// verbatimModuleSyntax cannot read by name.
const ARGON2ID = 2 as Algorithm;
const V0X13 = 1 as Version;

/** argon2id, 19 MiB, 2 passes, 1 lane: the OWASP baseline (and @node-rs/argon2's defaults). */
export const PASSWORD_HASHING = { algorithm: ARGON2ID, version: V0X13, memoryCost: 19_456, timeCost: 2, parallelism: 1, outputLen: 32 } as const;

export const hashPassword = (password: string): Promise<string> => hash(password, PASSWORD_HASHING);

/**
 * Whether the password matches the stored hash: Keyhall's argon2id, or an imported format
 * (imported-hashes.ts); a malformed hash is a mismatch, never an error.
 */
export const verifyPassword = (passwordHash: string, password: string): Promise<boolean> =>
  passwordHash.startsWith('$argon2id$') ? verify(passwordHash, password).catch(() => false) : verifyStoredHash(passwordHash, password);

/** Whether a stored hash was made with other parameters than PASSWORD_HASHING (or cannot be read). */
export function needsRehash(passwordHash: string): boolean {
  let made: ReturnType<typeof parseOptions>;
  try {
    made = parseOptions(passwordHash);
  } catch {
    return true;
  }
  return (Object.keys(PASSWORD_HASHING) as Array<keyof typeof PASSWORD_HASHING>).some((k) => made[k] !== PASSWORD_HASHING[k]);
}

/** A replacement hash computed after a successful sign-in, to be stored by `upgradeHash`. */
export interface Rehash {
  next: string;
  /** The format replaced: another than argon2id is an imported hash (`user.password_rehashed`). */
  from: HashFormat | 'unknown';
}

/**
 * After a successful sign-in with `password`: the argon2id hash with today's parameters that
 * replaces a hash made with other parameters or in an imported format, or undefined when the
 * stored one is current. Computed outside any transaction (it takes a while).
 */
export async function rehashFor(user: UserRecord, password: string): Promise<Rehash | undefined> {
  if (user.passwordHash === null || !needsRehash(user.passwordHash)) return undefined;
  return { next: await hashPassword(password), from: hashFormat(user.passwordHash) ?? 'unknown' };
}

/**
 * Stores a `rehashFor` result only if the stored hash is still the one verified (a password
 * changed meanwhile stays), without a new `updated_at` (the password is the same); the record of
 * who set the password follows it to the new hash. Whether it was replaced.
 */
export function upgradeHash(users: UserRepo, user: UserRecord, rehash: Rehash): Promise<boolean> {
  if (user.passwordHash === null) return Promise.resolve(false);
  const setBy = currentPasswordSetBy(user);
  return users.replacePasswordHash(user.tenantId, user.id, user.passwordHash, {
    passwordHash: rehash.next,
    passwordSetBy: setBy && { ...setBy, hash_tag: passwordTag(rehash.next) },
  });
}
