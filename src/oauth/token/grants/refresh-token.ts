/** refresh_token (RFC 6749 §6) with rotation and reuse detection (RFC 9700 §4.14.2). */
import { sha256Hex } from '../../../kernel/crypto/hash.js';
import { oauthErrors } from '../../errors.js';
import { requiredParam } from '../../params.js';
import { accessTokenOrganizationClaims, type OrganizationPort } from '../../organization.js';
import { type Actor, issueAccessToken, type KeySource } from '../../tokens/access-token.js';
import type { PresentedRefreshToken, RefreshTokenStore } from '../../types.js';
import type { SigninStore } from '../../authorize/types.js';
import { mappedClaims, mapsInto } from '../../claims-mapping.js';
import type { UserProfileSource } from '../../userinfo/claims.js';
import { rotateRefreshToken } from '../refresh.js';
import { narrowScope, requestedResources } from '../targets.js';
import type { Atomically, GrantContext, GrantHandler, TokenResponse } from '../types.js';

export interface RefreshTokenGrantPorts {
  refreshTokens: RefreshTokenStore;
  keys: KeySource;
  atomically: Atomically;
  /** A family signed in to an organization is refreshed only while the user is a member. */
  organizations?: OrganizationPort | undefined;
  /** The client's claims mapping, and the user's profile it reads (each refreshed access token reads it again). */
  clientSettings?: SigninStore['clientSettings'] | undefined;
  profiles?: UserProfileSource | undefined;
}

/** The client's mapped access-token claims for the family's user, read now; none without a mapping. */
async function mapped(ctx: GrantContext, ports: RefreshTokenGrantPorts, sub: string): Promise<Record<string, unknown> | undefined> {
  if (!ports.clientSettings || !ports.profiles) return undefined;
  const { claims } = await ports.clientSettings(ctx.tenant.id, ctx.client.id);
  if (!mapsInto(claims, 'access_token')) return undefined;
  const user = await ports.profiles.profile(ctx.tenant.id, sub);
  return user ? mappedClaims(claims, 'access_token', user) : undefined;
}

async function findToken(ctx: GrantContext, ports: RefreshTokenGrantPorts): Promise<PresentedRefreshToken> {
  const token = requiredParam(ctx.req.body, 'refresh_token');
  const found = await ports.refreshTokens.find(ctx.tenant.id, sha256Hex(token));
  if (!found) throw oauthErrors.invalidGrant('unknown refresh token');
  return found;
}

function checkClient(ctx: GrantContext, t: PresentedRefreshToken): void {
  if (t.family.clientId !== ctx.client.id) throw oauthErrors.invalidGrant('refresh token was issued to another client');
}

function checkNotRevoked(t: PresentedRefreshToken): void {
  if (t.family.revokedAt !== null) throw oauthErrors.invalidGrant('refresh token was revoked');
}

/** A token older than the family's current one was already rotated: revoke the whole family. */
async function checkNotReused(ctx: GrantContext, ports: RefreshTokenGrantPorts, t: PresentedRefreshToken): Promise<void> {
  if (t.generation === t.family.generation) return;
  await revokeForReuse(ctx, ports, t);
  throw oauthErrors.invalidGrant('refresh token was already used');
}

/** The family's revocation and its audit event commit together. */
async function revokeForReuse(ctx: GrantContext, ports: RefreshTokenGrantPorts, t: PresentedRefreshToken): Promise<void> {
  await ports.atomically(async (unit) => {
    await unit.refreshTokens.revokeFamily(ctx.tenant.id, t.family.id, ctx.now);
    await unit.audit({
      type: 'refresh_token.reused',
      tenantId: ctx.tenant.id,
      data: { client_id: t.family.clientId, sub: t.family.sub, family_id: t.family.id },
    });
  });
}

function checkNotExpired(ctx: GrantContext, t: PresentedRefreshToken): void {
  if (t.expiresAt <= ctx.now || t.family.expiresAt <= ctx.now) throw oauthErrors.invalidGrant('refresh token expired');
}

/** A family bound to a DPoP key (public clients) needs a proof from that key. */
function checkBinding(ctx: GrantContext, t: PresentedRefreshToken): void {
  if (t.family.jkt === null) return;
  if (!ctx.dpop) throw oauthErrors.invalidDpopProof('this refresh token requires a DPoP proof');
  if (ctx.dpop.jkt !== t.family.jkt) throw oauthErrors.invalidGrant('refresh token is bound to another DPoP key');
}

async function handle(ctx: GrantContext, ports: RefreshTokenGrantPorts): Promise<TokenResponse> {
  const t = await findToken(ctx, ports);
  checkClient(ctx, t);
  checkNotRevoked(t);
  await checkNotReused(ctx, ports, t);
  checkNotExpired(ctx, t);
  checkBinding(ctx, t);
  const family = t.family;
  const scopes = narrowScope(ctx.req, family.scopes);
  const requested = requestedResources(ctx.req, family.resources);
  const audience = requested.length > 0 ? requested : family.resources;
  const jkt = family.jkt ?? ctx.dpop?.jkt;
  const { alg, ttlSeconds } = await ctx.tokenPolicy({ audience, scopes, jkt });
  // The organization the grant signed in to stays; its claims are read again (roles may have changed).
  let organization: Record<string, unknown> | undefined;
  if (family.organizationId && ports.organizations) {
    const grants = await ports.organizations.grants(ctx.tenant.id, family.organizationId, family.sub);
    if (!grants) throw oauthErrors.invalidGrant('the user is no longer a member of the organization');
    organization = accessTokenOrganizationClaims(family.organizationId, grants, audience, scopes);
  }
  const next = await rotateRefreshToken(ctx.tenant, family, t.generation, ports, ctx.now);
  if (!next) {
    // Another request rotated this token first: a parallel use is a reuse.
    await revokeForReuse(ctx, ports, t);
    throw oauthErrors.invalidGrant('refresh token was already used');
  }
  const at = await issueAccessToken(
    ctx.tenant,
    {
      sub: family.sub,
      clientId: family.clientId,
      scopes,
      audience,
      jkt,
      act: family.extra?.act as Actor | undefined,
      ttlSeconds,
      alg,
      organization,
      mapped: await mapped(ctx, ports, family.sub),
    },
    { keys: ports.keys, now: ctx.now },
  );
  return {
    access_token: at.token,
    token_type: at.tokenType,
    expires_in: at.expiresIn,
    refresh_token: next,
    ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
  };
}

export function refreshTokenGrant(ports: RefreshTokenGrantPorts): GrantHandler {
  return { publicClients: true, handle: (ctx) => handle(ctx, ports) };
}
