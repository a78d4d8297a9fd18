/**
 * Token introspection (RFC 7662) and revocation (RFC 7009) for an authenticated client.
 * Anything invalid, expired, revoked or from another tenant is `{active:false}` and nothing else.
 */
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { authenticateClient, clientAuthDeps } from '../client-auth/authenticate.js';
import { oauthErrors } from '../errors.js';
import { requiredParam } from '../params.js';
import { authorizeResourceRequest } from '../resource-server/guard.js';
import { REFRESH_TOKEN_PREFIX } from '../token/refresh.js';
import type { OAuthDeps } from '../token/types.js';
import { type AccessTokenClaims, TokenInvalid, verifyAccessToken } from '../tokens/verify-access-token.js';
import type { ClientRecord, OAuthHttpRequest, OAuthTenant } from '../types.js';

export type IntrospectionResponse = { active: false } | ({ active: true } & Record<string, unknown>);

const INACTIVE: IntrospectionResponse = { active: false };

async function accessTokenClaims(token: string, tenant: OAuthTenant, deps: OAuthDeps, now: number): Promise<AccessTokenClaims | undefined> {
  try {
    return await verifyAccessToken(token, tenant, { keys: deps.keys, revoked: deps.revoked, now });
  } catch (err) {
    if (err instanceof TokenInvalid) return undefined;
    throw err;
  }
}

function describeAccessToken(c: AccessTokenClaims): IntrospectionResponse {
  const { iss, sub, aud, client_id, scope, exp, iat, nbf, jti, cnf, act } = c;
  return {
    active: true,
    ...{ iss, sub, aud, client_id, scope, exp, iat, nbf, jti, cnf, act },
    token_type: cnf?.jkt ? 'DPoP' : 'Bearer',
  };
}

/** A refresh token is described only to the client it was issued to. */
async function describeRefreshToken(token: string, tenant: OAuthTenant, client: ClientRecord, deps: OAuthDeps, now: number): Promise<IntrospectionResponse> {
  const t = await deps.refreshTokens.find(tenant.id, sha256Hex(token));
  if (!t || t.family.clientId !== client.id || t.family.revokedAt !== null) return INACTIVE;
  if (t.generation !== t.family.generation || t.expiresAt <= now) return INACTIVE;
  return {
    active: true,
    token_type: 'refresh_token',
    iss: tenant.issuer,
    sub: t.family.sub,
    client_id: t.family.clientId,
    scope: t.family.scopes.join(' ') || undefined,
    exp: Math.floor(t.expiresAt / 1000),
    iat: Math.floor(t.createdAt / 1000),
    cnf: t.family.jkt ? { jkt: t.family.jkt } : undefined,
  };
}

/**
 * RFC 7662 §2.1 also lets the caller present an access token: it must be a confidential client's
 * own token (client_credentials: `sub` = `client_id`) for this tenant, Bearer or DPoP. A user's
 * token never authorizes introspection.
 */
async function callerByAccessToken(req: OAuthHttpRequest, tenant: OAuthTenant, deps: OAuthDeps): Promise<ClientRecord> {
  const claims = await authorizeResourceRequest(
    { method: req.method, url: `${tenant.issuer}${req.path}`, headers: req.headers },
    tenant,
    { resource: tenant.issuer },
    deps,
  );
  const client = claims.sub === claims.client_id ? await deps.clients.find(tenant.id, claims.client_id) : undefined;
  if (!client || client.authMethod === 'none') throw oauthErrors.invalidClient("introspection needs a confidential client's own access token");
  return client;
}

async function caller(req: OAuthHttpRequest, tenant: OAuthTenant, deps: OAuthDeps, now: number): Promise<ClientRecord> {
  const authorization = req.headers.authorization;
  const first = Array.isArray(authorization) ? authorization[0] : authorization;
  if (first && /^(bearer|dpop) /i.test(first)) return callerByAccessToken(req, tenant, deps);
  const client = await authenticateClient(req, tenant, clientAuthDeps(deps, now));
  // Anyone can name a public client: introspection needs a client that proves who it is.
  if (client.authMethod === 'none') throw oauthErrors.invalidClient('introspection requires client authentication');
  return client;
}

/** `token_type_hint` only orders the look-ups; a wrong hint still resolves (RFC 7662 §2.1). */
export async function handleIntrospection(req: OAuthHttpRequest, tenant: OAuthTenant, deps: OAuthDeps): Promise<IntrospectionResponse> {
  const now = deps.clock.now();
  const client = await caller(req, tenant, deps, now);
  const token = requiredParam(req.body, 'token');
  if (token.startsWith(REFRESH_TOKEN_PREFIX)) return describeRefreshToken(token, tenant, client, deps, now);
  const claims = await accessTokenClaims(token, tenant, deps, now);
  return claims ? describeAccessToken(claims) : INACTIVE;
}

/**
 * RFC 7009: a refresh token revokes its whole family; an access token joins the deny-list until
 * it expires. Only the client a token was issued to can revoke it; anything else is ignored and
 * the answer is the same 200.
 */
export async function handleRevocation(req: OAuthHttpRequest, tenant: OAuthTenant, deps: OAuthDeps): Promise<void> {
  const now = deps.clock.now();
  const client = await authenticateClient(req, tenant, clientAuthDeps(deps, now));
  const token = requiredParam(req.body, 'token');
  if (token.startsWith(REFRESH_TOKEN_PREFIX)) {
    const t = await deps.refreshTokens.find(tenant.id, sha256Hex(token));
    if (!t || t.family.clientId !== client.id || t.family.revokedAt !== null) return;
    await deps.atomically(async (unit) => {
      await unit.refreshTokens.revokeFamily(tenant.id, t.family.id, now);
      await unit.audit({ type: 'token.revoked', tenantId: tenant.id, data: { client_id: client.id, token_type: 'refresh_token', family_id: t.family.id } });
    });
    return;
  }
  const claims = await accessTokenClaims(token, tenant, deps, now);
  if (claims && claims.client_id === client.id) {
    // The deny-list entry and its audit row commit together.
    await deps.atomically(async (unit) => {
      await unit.revoked.revoke(tenant.id, claims.jti, claims.exp * 1000, now);
      await unit.audit({ type: 'token.revoked', tenantId: tenant.id, data: { client_id: client.id, token_type: 'access_token', jti: claims.jti } });
    });
  }
}
