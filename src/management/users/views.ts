/** What /v1 and the console show of users, their passkeys and their sessions. */
import { acrOf } from '../../oauth/authorize/acr.js';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import type { PasskeyRecord } from '../../storage/repos/mfa.js';
import type { UserRecord } from '../../storage/repos/users.js';
import { deviceOf, signInMethodOf } from '../../users/sign-in-methods.js';
import { iso } from '../common.js';

/** The public shape of a user: never the password or its hash. */
export function userView(u: UserRecord) {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    email_verified: u.emailVerified,
    has_password: u.passwordHash !== null,
    metadata: u.metadata ?? {},
    private_metadata: u.privateMetadata ?? {},
    created_at: iso(u.createdAt),
    updated_at: iso(u.updatedAt),
  };
}

/** A passkey: id, name, AAGUID, transports, times; never key material. */
export function passkeyView(p: PasskeyRecord) {
  return {
    id: p.id,
    name: p.name,
    aaguid: p.aaguid,
    transports: p.transports,
    attestation_verified: p.attestationVerified,
    created_at: iso(p.createdAt),
    last_used_at: p.lastUsedAt === null ? null : iso(p.lastUsedAt),
    disabled_at: p.disabledAt === null ? null : iso(p.disabledAt),
  };
}

/** A hosted-login session as /v1 shows it: times, methods and client hints; never the cookie value or its hash. */
export function sessionView(s: SessionRecord) {
  const amr = s.amr ?? ['pwd'];
  return {
    id: s.id,
    created_at: iso(s.createdAt),
    auth_time: iso(s.authTime),
    last_seen_at: iso(s.lastSeenAt),
    idle_expires_at: iso(s.idleExpiresAt),
    expires_at: iso(s.expiresAt),
    amr,
    acr: acrOf(amr),
    mfa_pending: s.mfaPending === true,
    user_agent: s.userAgent,
    device: deviceOf(s.userAgent),
    ip: s.ip,
    method: signInMethodOf(s),
    idp: s.idp ?? null,
  };
}
