/**
 * POST /device_authorization (RFC 8628 §3.1–3.2): a client authenticated as at /token (a public
 * client names itself with client_id) and registered for the device grant gets a device_code to
 * poll /token with and a user code the person enters at /activate. Both are stored only as
 * SHA-256; the device_code is a 256-bit secret, the user code is short and rate-limited where it
 * is entered, and a client has at most so many undecided user codes (docs/device-grant.md).
 */
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { AppError } from '../../kernel/errors.js';
import { newSecret } from '../../kernel/ids.js';
import { OIDC_SCOPES } from '../authorize/validate.js';
import { authenticateClient, clientAuthDeps } from '../client-auth/authenticate.js';
import { oauthErrors } from '../errors.js';
import { param } from '../params.js';
import { parseScope } from '../scope.js';
import { requestedResources } from '../token/targets.js';
import type { OAuthDeps } from '../token/types.js';
import { type ClientRecord, GRANT_TYPE, type OAuthHttpRequest, type OAuthTenant } from '../types.js';
import type { DeviceCodeStore } from './types.js';
import { newUserCode, normalizeUserCode } from './user-code.js';

export const DEVICE_AUTHORIZATION_PATH = '/device_authorization';
export const VERIFICATION_PATH = '/activate';
export const DEVICE_CODE_PREFIX = 'dc_';
/** RFC 8628 §3.2: the default minimum polling interval. */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;

/** The window of the per-client limit: a code expires within it (the TTL is at most an hour) and expired rows are kept an hour. */
export const UNDECIDED_WINDOW_MS = 3600_000;

export interface DeviceSettings {
  /** KEYHALL_DEVICE_CODE_TTL_SECONDS. */
  codeTtlSeconds: number;
  /** KEYHALL_DEVICE_MAX_UNDECIDED_PER_CLIENT: a client's user codes of the last hour neither approved nor denied (waiting or expired unused). */
  maxUndecidedPerClient: number;
}

export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** The scopes asked for: OpenID scopes and the client's own, as at /authorize. */
function requestedScopes(req: OAuthHttpRequest, client: ClientRecord): string[] {
  const scopes = parseScope(param(req.body, 'scope'), oauthErrors.invalidScope) ?? [];
  const allowed = new Set<string>([...OIDC_SCOPES, ...client.scopes]);
  const outside = scopes.filter((s) => !allowed.has(s));
  if (outside.length > 0) throw oauthErrors.invalidScope(`scope not allowed: ${outside.join(' ')}`);
  return scopes;
}

/** A user code no live authorization of the tenant has (a collision is a new draw). */
async function freshUserCode(tenant: OAuthTenant, store: DeviceCodeStore, now: number): Promise<string> {
  for (;;) {
    const code = newUserCode();
    if (!(await store.findPendingByUserCode(tenant.id, sha256Hex(normalizeUserCode(code)!), now))) return code;
  }
}

export async function handleDeviceAuthorization(
  req: OAuthHttpRequest,
  tenant: OAuthTenant,
  deps: OAuthDeps,
  device: { store: DeviceCodeStore; settings: DeviceSettings },
): Promise<DeviceAuthorizationResponse> {
  const now = deps.clock.now();
  const client = await authenticateClient(req, tenant, clientAuthDeps(deps, now));
  if (!client.grantTypes.includes(GRANT_TYPE.deviceCode)) throw oauthErrors.unauthorizedClient('grant_type not registered for this client');
  const scopes = requestedScopes(req, client);
  const resources = requestedResources(req, client.allowedResources);
  // Every live user code is one more a guess at /activate can hit: a client that asks for codes
  // nobody enters (or a stolen client id used to mint them) is stopped at its limit.
  if ((await device.store.countUndecided(tenant.id, client.id, now - UNDECIDED_WINDOW_MS)) >= device.settings.maxUndecidedPerClient) {
    throw new AppError(429, 'slow_down', 'too many user codes of this client are waiting or expired unused; try again later', { 'retry-after': '60' });
  }
  const deviceCode = newSecret(DEVICE_CODE_PREFIX);
  const userCode = await freshUserCode(tenant, device.store, now);
  const ttl = device.settings.codeTtlSeconds;
  await device.store.insert(sha256Hex(deviceCode), {
    tenantId: tenant.id,
    clientId: client.id,
    userCodeHash: sha256Hex(normalizeUserCode(userCode)!),
    scopes,
    resources,
    createdAt: now,
    expiresAt: now + ttl * 1000,
    intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS,
    lastPolledAt: null,
    status: 'pending',
    userId: null,
    sessionId: null,
    authTime: null,
    amr: null,
    decidedAt: null,
    consumedAt: null,
  });
  const verificationUri = `${tenant.issuer}${VERIFICATION_PATH}`;
  return {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: verificationUri,
    verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(userCode)}`,
    expires_in: ttl,
    interval: DEVICE_POLL_INTERVAL_SECONDS,
  };
}
