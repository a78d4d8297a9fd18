/**
 * Refresh-token families: issuing the first token of a grant and rotating on every use
 * (RFC 9700 §4.14.2). Tokens are 256-bit random strings stored only as SHA-256.
 */
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { newId, newSecret } from '../../kernel/ids.js';
import type { OAuthTenant, RefreshFamily } from '../types.js';
import type { OAuthDeps } from './types.js';

export const REFRESH_TOKEN_PREFIX = 'rt_';

export interface NewGrant {
  clientId: string;
  sub: string;
  scopes: string[];
  resources: string[];
  /** DPoP key the refresh token is bound to (public clients, RFC 9449 §5). */
  jkt: string | null;
  extra?: Record<string, unknown> | null;
  /** The organization signed in to (docs/authorization.md). */
  organizationId?: string | null;
  /** The session the person signed in with (back-channel logout revokes the family with it). */
  sessionId?: string | null;
}

/** Starts a refresh-token family (used by the code grant and other grants that issue RTs). */
export async function startRefreshFamily(
  tenant: OAuthTenant,
  grant: NewGrant,
  deps: Pick<OAuthDeps, 'refreshTokens' | 'settings'>,
  now: number,
): Promise<string> {
  return (await startRefreshFamilyWithId(tenant, grant, deps, now)).token;
}

/** `startRefreshFamily`, with the new family's id (the code grant records it beside the code: no read back). */
export async function startRefreshFamilyWithId(
  tenant: OAuthTenant,
  grant: NewGrant,
  deps: Pick<OAuthDeps, 'refreshTokens' | 'settings'>,
  now: number,
): Promise<{ token: string; familyId: string }> {
  const token = newSecret(REFRESH_TOKEN_PREFIX);
  const expiresAt = now + deps.settings.refreshTokenTtlSeconds * 1000;
  const family: RefreshFamily = {
    id: newId('rtf', now),
    tenantId: tenant.id,
    clientId: grant.clientId,
    sub: grant.sub,
    scopes: grant.scopes,
    resources: grant.resources,
    jkt: grant.jkt,
    extra: grant.extra ?? null,
    generation: 0,
    createdAt: now,
    expiresAt,
    revokedAt: null,
    organizationId: grant.organizationId ?? null,
    sessionId: grant.sessionId ?? null,
  };
  await deps.refreshTokens.createFamily(family, sha256Hex(token), expiresAt);
  return { token, familyId: family.id };
}

/**
 * Compare-and-set rotation: the new token is returned only if the family was still at the
 * presented token's generation. Each token lives as long as the family's remaining lifetime.
 */
export async function rotateRefreshToken(
  tenant: OAuthTenant,
  family: RefreshFamily,
  seenGeneration: number,
  deps: Pick<OAuthDeps, 'refreshTokens'>,
  now: number,
): Promise<string | undefined> {
  const token = newSecret(REFRESH_TOKEN_PREFIX);
  const won = await deps.refreshTokens.rotate(tenant.id, family.id, seenGeneration, {
    tokenHash: sha256Hex(token),
    createdAt: now,
    expiresAt: family.expiresAt,
  });
  return won ? token : undefined;
}
