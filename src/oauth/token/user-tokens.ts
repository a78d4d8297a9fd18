/**
 * The tokens a grant issues for a person who signed in (the authorization code grant and the
 * device grant, RFC 8628 §3.5): the access token, a refresh token for `offline_access` when the
 * client may refresh, and an ID token for `openid` — the same for every such grant.
 */
import type { SigninClientSettings, SigninStore } from '../authorize/types.js';
import { isFapi2 } from '../profile.js';
import { type IdTokenAlg, signIdToken } from '../id-token/sign.js';
import { accessTokenOrganizationClaims, idTokenOrganizationClaims, type OrganizationGrants, type OrganizationPort } from '../organization.js';
import { oauthErrors } from '../errors.js';
import { issueAccessToken, type KeySource } from '../tokens/access-token.js';
import { GRANT_TYPE, type RefreshTokenStore } from '../types.js';
import { idTokenProfileClaims, type UserInfoSource, type UserProfileSource } from '../userinfo/claims.js';
import { mappedClaims, mapsInto } from '../claims-mapping.js';
import { startRefreshFamilyWithId } from './refresh.js';
import type { GrantContext, TokenResponse } from './types.js';

export interface UserTokenPorts {
  clientSettings: SigninStore['clientSettings'];
  /** Remembers that the client received tokens in the session, for Back-Channel Logout 1.0. */
  recordSessionClient: SigninStore['recordSessionClient'];
  /** The user's profile, for the ID token's profile claims (none without it). */
  profiles?: UserProfileSource | undefined;
  refreshTokens: RefreshTokenStore;
  keys: KeySource;
  /** Organization-scoped sign-in and the tokens' organization claims (docs/authorization.md). */
  organizations?: OrganizationPort | undefined;
}

/** What the person granted, and the sign-in they granted it in. */
export interface UserGrant {
  userId: string;
  scopes: string[];
  resources: string[];
  nonce: string | null;
  /** Epoch ms of the login. */
  authTime: number;
  sessionId: string | null;
  amr: string[];
  /** The organization the person signed in to (`organization=`), or null. */
  organizationId?: string | null;
  /** The social connection the person signed in with (the ID token's `idp`), or null. */
  idp?: string | null;
}

export interface IssuedUserTokens {
  response: TokenResponse;
  /** The access token's jti and expiry, and the refresh family started (to revoke them on a code's reuse). */
  jti: string;
  exp: number;
  familyId: string | null;
}

/** Refresh tokens only for `offline_access`, and only to clients registered for the grant. */
async function maybeRefreshToken(
  ctx: GrantContext,
  ports: UserTokenPorts,
  grant: UserGrant,
  settings: SigninClientSettings,
): Promise<{ token: string; familyId: string } | undefined> {
  if (!grant.scopes.includes('offline_access') || !ctx.client.grantTypes.includes(GRANT_TYPE.refreshToken)) return undefined;
  return startRefreshFamilyWithId(
    ctx.tenant,
    {
      clientId: ctx.client.id,
      sub: grant.userId,
      scopes: grant.scopes,
      resources: grant.resources,
      organizationId: grant.organizationId && ports.organizations ? grant.organizationId : null,
      sessionId: grant.sessionId,
      // Public clients' refresh tokens are bound to their DPoP key (RFC 9449 §5), and FAPI 2.0 clients' too.
      jkt: ctx.client.authMethod === 'none' || isFapi2(settings.profile) ? (ctx.dpop?.jkt ?? null) : null,
    },
    { refreshTokens: ports.refreshTokens, settings: ctx.lifetimes },
    ctx.now,
  );
}

/**
 * The user's profile, read once (one statement) when the ID token carries profile claims — the
 * granted scopes ask for them and the tenant does not keep ID tokens minimal — or the client maps
 * claims into its tokens.
 */
async function profileFor(ctx: GrantContext, ports: UserTokenPorts, grant: UserGrant, settings: SigninClientSettings): Promise<UserInfoSource | undefined> {
  if (!ports.profiles) return undefined;
  const scoped =
    ctx.lifetimes.idTokenClaims !== 'minimal' && grant.scopes.includes('openid') && (grant.scopes.includes('email') || grant.scopes.includes('profile'));
  const mapped = mapsInto(settings.claims, 'access_token') || (grant.scopes.includes('openid') && mapsInto(settings.claims, 'id_token'));
  return scoped || mapped ? ports.profiles.profile(ctx.tenant.id, grant.userId) : undefined;
}

/** The profile claims of the granted scopes, unless the tenant keeps ID tokens minimal. */
function profileClaims(ctx: GrantContext, grant: UserGrant, user: UserInfoSource | undefined): Record<string, unknown> {
  if (ctx.lifetimes.idTokenClaims === 'minimal' || !user) return {};
  return idTokenProfileClaims(user, grant.scopes);
}

export async function issueUserTokens(ctx: GrantContext, ports: UserTokenPorts, grant: UserGrant): Promise<IssuedUserTokens> {
  const scopes = grant.scopes;
  const orgId = ports.organizations ? (grant.organizationId ?? null) : null;
  let grants: OrganizationGrants | undefined;
  if (orgId) {
    grants = await ports.organizations!.grants(ctx.tenant.id, orgId, grant.userId);
    if (!grants) throw oauthErrors.invalidGrant('the user is not a member of the organization');
  }
  const { alg, ttlSeconds: ttl } = await ctx.tokenPolicy({ audience: grant.resources, scopes, jkt: ctx.dpop?.jkt });
  const settings = await ports.clientSettings(ctx.tenant.id, ctx.client.id);
  const user = await profileFor(ctx, ports, grant, settings);
  const at = await issueAccessToken(
    ctx.tenant,
    {
      sub: grant.userId,
      clientId: ctx.client.id,
      scopes,
      audience: grant.resources,
      jkt: ctx.dpop?.jkt,
      ttlSeconds: ttl,
      alg,
      organization: orgId && grants ? accessTokenOrganizationClaims(orgId, grants, grant.resources, scopes) : undefined,
      mapped: user ? mappedClaims(settings.claims, 'access_token', user) : undefined,
    },
    { keys: ports.keys, now: ctx.now },
  );
  const rt = await maybeRefreshToken(ctx, ports, grant, settings);
  // The client is told when this session ends (Back-Channel Logout 1.0); its refresh-token family was started bound to it.
  if (grant.sessionId) await ports.recordSessionClient(ctx.tenant.id, grant.sessionId, ctx.client.id, ctx.now);
  const idToken = scopes.includes('openid')
    ? await signIdToken(
        ctx.tenant,
        {
          sub: grant.userId,
          clientId: ctx.client.id,
          alg: settings.idTokenAlg as IdTokenAlg,
          authTime: grant.authTime,
          nonce: grant.nonce,
          accessToken: at.token,
          sessionId: grant.sessionId,
          amr: grant.amr,
          ...(grant.idp ? { idp: grant.idp } : {}),
          profile: {
            ...(user ? mappedClaims(settings.claims, 'id_token', user) : {}),
            ...profileClaims(ctx, grant, user),
            ...(orgId && grants ? idTokenOrganizationClaims(orgId, grants) : {}),
          },
          ttlSeconds: ttl,
        },
        { keys: ports.keys, now: ctx.now },
      )
    : undefined;
  return {
    response: {
      access_token: at.token,
      token_type: at.tokenType,
      expires_in: at.expiresIn,
      ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
      ...(rt ? { refresh_token: rt.token } : {}),
      ...(idToken ? { id_token: idToken } : {}),
    },
    jti: at.jti,
    exp: ctx.now + ttl * 1000,
    familyId: rt?.familyId ?? null,
  };
}
