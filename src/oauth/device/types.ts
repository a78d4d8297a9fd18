/** Records and storage port of the device authorization grant (RFC 8628). Framework-free. */

export type DeviceStatus = 'pending' | 'approved' | 'denied';

/** One device authorization: stored under SHA-256 of its device_code, found by SHA-256 of its user code. */
export interface DeviceAuthorization {
  tenantId: string;
  clientId: string;
  /** SHA-256 hex of the normalised user code (eight characters, no hyphen). */
  userCodeHash: string;
  scopes: string[];
  resources: string[];
  createdAt: number;
  expiresAt: number;
  /** The polling interval in seconds (raised by 5 at each `slow_down`). */
  intervalSeconds: number;
  lastPolledAt: number | null;
  status: DeviceStatus;
  /** The person who approved or denied, and the sign-in they did it in. */
  userId: string | null;
  sessionId: string | null;
  authTime: number | null;
  amr: string[] | null;
  decidedAt: number | null;
  /** When /token issued tokens for it (single use). */
  consumedAt: number | null;
}

export interface DeviceDecision {
  status: 'approved' | 'denied';
  userId: string;
  sessionId: string;
  authTime: number;
  amr: string[];
}

export interface DeviceCodeStore {
  insert(deviceCodeHash: string, rec: DeviceAuthorization): Promise<void>;
  find(tenantId: string, deviceCodeHash: string): Promise<DeviceAuthorization | undefined>;
  /** The pending, unexpired authorization a user code names (its device_code hash with it). */
  findPendingByUserCode(tenantId: string, userCodeHash: string, now: number): Promise<{ deviceCodeHash: string; rec: DeviceAuthorization } | undefined>;
  /** How many of a client's authorizations created after `since` are still undecided (waiting, or expired unused). */
  countUndecided(tenantId: string, clientId: string, since: number): Promise<number>;
  /** Records a poll of /token and the interval from now on. */
  polled(tenantId: string, deviceCodeHash: string, now: number, intervalSeconds: number): Promise<void>;
  /** Compare-and-set: a pending, unexpired authorization is approved or denied once. */
  decide(tenantId: string, deviceCodeHash: string, decision: DeviceDecision, now: number): Promise<boolean>;
  /** Consume-once of an approved authorization by /token. */
  consume(tenantId: string, deviceCodeHash: string, now: number): Promise<boolean>;
}

/** Failed user-code entries counted per address in fixed windows (src/storage/repos/signin-accounts.ts). */
export interface AttemptCounter {
  reserve(tenantId: string, keyHash: string, max: number, now: number, windowMs: number): Promise<boolean>;
  release(tenantId: string, keyHash: string, now: number): Promise<void>;
  current(tenantId: string, keyHash: string, now: number): Promise<{ count: number; windowEndsAt: number }>;
}
