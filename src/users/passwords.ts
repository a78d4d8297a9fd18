/**
 * Passwords: argon2id with today's parameters in one place. A stored hash made with other
 * parameters (an earlier default, an import) still verifies, and is replaced by one with today's
 * parameters at the next successful sign-in (`upgradeHash`).
 */
import { type Algorithm, hash, parseOptions, verify, type Version } from '@node-rs/argon2';
import { currentPasswordSetBy, passwordTag, type UserRecord, type UserRepo } from '../storage/repos/users.js';

// Algorithm.Argon2id and Version.V0x13: @node-rs/argon2 declares them as const enums, which
// verbatimModuleSyntax cannot read by name.
const ARGON2ID = 2 as Algorithm;
const V0X13 = 1 as Version;

/** argon2id, 19 MiB, 2 passes, 1 lane: the OWASP baseline (and @node-rs/argon2's defaults). */
export const PASSWORD_HASHING = { algorithm: ARGON2ID, version: V0X13, memoryCost: 19_456, timeCost: 2, parallelism: 1, outputLen: 32 } as const;

export const hashPassword = (password: string): Promise<string> => hash(password, PASSWORD_HASHING);

/** Whether the password matches the stored hash; a malformed hash is a mismatch, never an error. */
export const verifyPassword = (passwordHash: string, password: string): Promise<boolean> => verify(passwordHash, password).catch(() => false);

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

/**
 * After a successful sign-in with `password`: a hash with outdated parameters is replaced by one
 * with today's. Only if the stored hash is still the one verified (a password changed meanwhile
 * stays), without an event or a new `updated_at` (the password is the same); the record of who
 * set the password follows it to the new hash.
 */
export async function upgradeHash(users: UserRepo, user: UserRecord, password: string): Promise<void> {
  if (user.passwordHash === null || !needsRehash(user.passwordHash)) return;
  const next = await hashPassword(password);
  const setBy = currentPasswordSetBy(user);
  await users.replacePasswordHash(user.tenantId, user.id, user.passwordHash, {
    passwordHash: next,
    passwordSetBy: setBy && { ...setBy, hash_tag: passwordTag(next) },
  });
}
