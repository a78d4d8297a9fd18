/**
 * The verification side of the device grant (RFC 8628 §3.3), for the sign-in engine: the user
 * code a person typed at /activate (rate-limited per address: ten wrong codes in ten minutes,
 * then 429 until the window ends), the authorization it names with its client, and the person's
 * decision. Framework-free.
 */
import { sha256Hex } from '../../kernel/crypto/hash.js';
import type { ClientRecord, ClientStore, OAuthTenant } from '../types.js';
import type { AttemptCounter, DeviceAuthorization, DeviceCodeStore, DeviceDecision } from './types.js';
import { normalizeUserCode } from './user-code.js';

export const USER_CODE_MAX_FAILURES = 10;
export const USER_CODE_WINDOW_MS = 10 * 60 * 1000;

export interface LoadedDevice {
  /** SHA-256 of the device_code: the authorization's key. */
  hash: string;
  authorization: DeviceAuthorization;
  client: ClientRecord;
}

export type UserCodeResult = { kind: 'ok'; device: LoadedDevice } | { kind: 'invalid' } | { kind: 'limited'; retryAfterSeconds: number };

export interface DeviceVerificationDeps {
  store: DeviceCodeStore;
  clients: ClientStore;
  attempts: AttemptCounter;
  now: number;
}

const ipKey = (ip: string) => sha256Hex(`device_user_code:ip:${ip}`);

/** The pending authorization the typed user code names; every attempt counts until it succeeds. */
export async function findByUserCode(tenant: OAuthTenant, typed: string | undefined, ip: string, deps: DeviceVerificationDeps): Promise<UserCodeResult> {
  const key = ipKey(ip);
  if (!(await deps.attempts.reserve(tenant.id, key, USER_CODE_MAX_FAILURES, deps.now, USER_CODE_WINDOW_MS))) {
    const c = await deps.attempts.current(tenant.id, key, deps.now);
    return { kind: 'limited', retryAfterSeconds: Math.max(Math.ceil((c.windowEndsAt - deps.now) / 1000), 1) };
  }
  const code = normalizeUserCode(typed);
  const found = code === undefined ? undefined : await deps.store.findPendingByUserCode(tenant.id, sha256Hex(code), deps.now);
  const client = found && (await deps.clients.find(tenant.id, found.rec.clientId));
  if (!found || !client) return { kind: 'invalid' };
  await deps.attempts.release(tenant.id, key, deps.now);
  return { kind: 'ok', device: { hash: found.deviceCodeHash, authorization: found.rec, client } };
}

/** The authorization stored under `hash` while it still waits for a decision. */
export async function loadPending(tenant: OAuthTenant, hash: string, deps: Omit<DeviceVerificationDeps, 'attempts'>): Promise<LoadedDevice | undefined> {
  const rec = await deps.store.find(tenant.id, hash);
  if (!rec || rec.status !== 'pending' || rec.expiresAt <= deps.now) return undefined;
  const client = await deps.clients.find(tenant.id, rec.clientId);
  return client && { hash, authorization: rec, client };
}

/** Approves or denies once; false when it was decided, or expired, meanwhile. */
export function decide(tenant: OAuthTenant, hash: string, decision: DeviceDecision, deps: Pick<DeviceVerificationDeps, 'store' | 'now'>): Promise<boolean> {
  return deps.store.decide(tenant.id, hash, decision, deps.now);
}
