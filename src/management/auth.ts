import type { Clock } from '../kernel/clock.js';
import { sha256Hex } from '../kernel/crypto/hash.js';
import { errors } from '../kernel/errors.js';
import type { ApiKeyRepo } from '../storage/repos/api-keys.js';
import type { RateLimitRepo } from '../storage/repos/rate-limits.js';
import { API_KEY_PREFIX } from './api-keys/service.js';
import { isPermission, type Permission } from './permissions.js';
import type { Principal } from './principal.js';

/** last_used_at is written at most once per this period per key. */
export const LAST_USED_RESOLUTION_MS = 5 * 60 * 1000;

const KEY_SHAPE = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`);

/**
 * Authenticates `Authorization: Bearer sk_live_…` against this tenant's keys. Missing,
 * malformed, unknown (including another tenant's) and revoked keys are all 401 invalid_token.
 * Nothing is cached, so a revocation takes effect on every instance at once.
 */
export async function authenticateApiKey(repo: ApiKeyRepo, clock: Clock, tenantId: string, authorization: string | undefined): Promise<Principal> {
  if (!authorization) throw errors.apiKeyRequired();
  const match = /^Bearer +(\S+)$/i.exec(authorization.trim());
  const token = match?.[1];
  if (!token || !KEY_SHAPE.test(token)) throw errors.invalidToken('malformed API key');
  const key = await repo.findByHash(tenantId, sha256Hex(token));
  if (!key || key.revokedAt !== null) throw errors.invalidToken('unknown or revoked API key');
  const now = clock.now();
  if (key.lastUsedAt === null || now - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    await repo.touch(key.id, now, LAST_USED_RESOLUTION_MS);
  }
  return {
    actor: { type: 'api_key', id: key.id },
    keyId: key.id,
    tenantId,
    organizationId: key.organizationId,
    scopes: new Set(key.scopes.filter(isPermission)),
  };
}

/** Where a route may be called from. */
export type RouteAccess =
  /** Under /v1/organizations/{orgId}: platform keys, and keys bound to that organization. */
  | 'organization'
  /** Tenant-wide resources: platform keys only (an org-bound key gets 403 forbidden). */
  | 'platform'
  /** Any key; the route itself narrows what an org-bound key sees. */
  | 'any';

/**
 * The authorization rules of the spec, in order: a key bound to another organization gets 403
 * `forbidden` even if it holds the permission; then a missing permission is 403
 * `insufficient_scope`.
 */
export function authorize(p: Principal, route: { permission: Permission; access: RouteAccess; orgId?: string }): void {
  if (p.organizationId !== null) {
    if (route.access === 'platform') throw errors.forbidden('this API key is bound to an organization');
    if (route.access === 'organization' && route.orgId !== p.organizationId) {
      throw errors.forbidden('this API key is bound to another organization');
    }
  }
  if (!p.scopes.has(route.permission)) throw errors.insufficientScope(`this route needs the ${route.permission} permission`);
}

/** Authentication and the per-key rate limit of /v1 requests (src/management/v1.ts). */
export class ManagementAuth {
  constructor(
    private readonly keys: ApiKeyRepo,
    private readonly limits: RateLimitRepo,
    private readonly clock: Clock,
    /** Requests per key per minute (KEYHALL_API_RATE_LIMIT). */
    private readonly perMinute: number,
  ) {}

  authenticate(tenantId: string, authorization: string | undefined): Promise<Principal> {
    return authenticateApiKey(this.keys, this.clock, tenantId, authorization);
  }

  /** One limit per key across all instances; `429 rate_limited` before any work is done. */
  async checkRateLimit(p: Principal): Promise<void> {
    const waitMs = await this.limits.hit(p.tenantId, `${p.actor.type}:${p.actor.id}`, this.perMinute, 60_000, this.clock.now());
    if (waitMs > 0) throw errors.tooManyRequests(Math.ceil(waitMs / 1000));
  }
}
