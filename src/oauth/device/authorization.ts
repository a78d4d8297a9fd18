/**
 * POST /device_authorization (RFC 8628 §3.1–3.2): a client authenticated as at /token (a public
 * client names itself with client_id) and registered for the device grant gets a device_code to
 * poll /token with and a user code the person enters at /activate. Both are stored only as
 * SHA-256; the device_code is a 256-bit secret, the user code is short and rate-limited where it
 * is entered.
 */
import { sha256Hex } from '../../kernel/crypto/hash.js';
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

export interface DeviceSettings {
  /** KEYHALL_DEVICE_CODE_TTL_SECONDS. */
  codeTtlSeconds: number;
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
