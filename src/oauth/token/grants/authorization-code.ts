/**
 * authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6, RFC 9449 §10, OIDC Core §3.1.3): a code is
 * single-use, short-lived and bound to its client, redirect_uri, PKCE challenge and DPoP key. A
 * second redemption fails and revokes what the first one issued (RFC 6749 §4.1.2).
 */
import { createHash } from 'node:crypto';
import { sha256Hex } from '../../../kernel/crypto/hash.js';
import type { CodeRecord, SigninStore } from '../../authorize/types.js';
import { oauthErrors } from '../../errors.js';
import { type IdTokenAlg, signIdToken } from '../../id-token/sign.js';
import { param, requiredParam } from '../../params.js';
import { issueAccessToken, type KeySource } from '../../tokens/access-token.js';
import { GRANT_TYPE, type RefreshTokenStore } from '../../types.js';
import { idTokenProfileClaims, type UserProfileSource } from '../../userinfo/claims.js';
import { startRefreshFamily } from '../refresh.js';
import type { Atomically, GrantContext, GrantHandler, TokenResponse } from '../types.js';

/** The code store: single-use codes and the tokens each one issued (src/storage/repos/signin-store.ts). */
export type CodeStore = Pick<SigninStore, 'redeemCode' | 'recordIssued' | 'clientSettings'>;

export interface AuthorizationCodeGrantPorts {
  codes: CodeStore;
  /** The user's profile, for the ID token's profile claims (none without it). */
  profiles?: UserProfileSource | undefined;
  refreshTokens: RefreshTokenStore;
  keys: KeySource;
  atomically: Atomically;
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** What the first redemption issued is revoked in one transaction. */
async function revokeIssued(ctx: GrantContext, ports: AuthorizationCodeGrantPorts, code: CodeRecord): Promise<void> {
  await ports.atomically(async (unit) => {
    if (code.issuedJti !== null && code.issuedExp !== null) await unit.revoked.revoke(ctx.tenant.id, code.issuedJti, code.issuedExp, ctx.now);
    if (code.issuedFamily !== null) await unit.refreshTokens.revokeFamily(ctx.tenant.id, code.issuedFamily, ctx.now);
  });
}

async function redeem(ctx: GrantContext, ports: AuthorizationCodeGrantPorts, codeHash: string): Promise<CodeRecord> {
  const { won, code } = await ports.codes.redeemCode(ctx.tenant.id, codeHash, ctx.client.id, ctx.now);
  if (!code || code.clientId !== ctx.client.id) throw oauthErrors.invalidGrant('unknown authorization code');
  if (won) return code;
  if (code.consumedAt !== null) {
    await revokeIssued(ctx, ports, code);
    throw oauthErrors.invalidGrant('authorization code was already used');
  }
  if (code.expiresAt <= ctx.now) throw oauthErrors.invalidGrant('authorization code expired');
  throw oauthErrors.invalidGrant('the sign-in session this code was issued in has ended');
}

function checkRedirectUri(ctx: GrantContext, code: CodeRecord): void {
  if (param(ctx.req.body, 'redirect_uri') !== code.grant.redirectUri) throw oauthErrors.invalidGrant('redirect_uri does not match the authorization request');
}

/** RFC 7636 §4.6; a verifier without a challenge is a downgrade (RFC 9700 §4.8.2). */
function checkPkce(ctx: GrantContext, code: CodeRecord): void {
  const verifier = param(ctx.req.body, 'code_verifier');
  if (code.grant.codeChallenge === null) {
    if (verifier !== undefined) throw oauthErrors.invalidGrant('code_verifier sent but no code_challenge was');
    return;
  }
  if (verifier === undefined || !VERIFIER.test(verifier)) throw oauthErrors.invalidGrant('missing or malformed code_verifier');
  if (createHash('sha256').update(verifier, 'ascii').digest('base64url') !== code.grant.codeChallenge)
    throw oauthErrors.invalidGrant('code_verifier does not match');
}

function checkDpopKey(ctx: GrantContext, code: CodeRecord): void {
  if (code.grant.dpopJkt === null) return;
  if (ctx.dpop?.jkt !== code.grant.dpopJkt) throw oauthErrors.invalidGrant('the code is bound to another DPoP key');
}

/** Refresh tokens only for `offline_access`, and only to clients registered for the grant. */
async function maybeRefreshToken(
  ctx: GrantContext,
  ports: AuthorizationCodeGrantPorts,
  code: CodeRecord,
): Promise<{ token: string; familyId: string } | undefined> {
  if (!code.grant.scopes.includes('offline_access') || !ctx.client.grantTypes.includes(GRANT_TYPE.refreshToken)) return undefined;
  const token = await startRefreshFamily(
    ctx.tenant,
    {
      clientId: ctx.client.id,
      sub: code.userId,
      scopes: code.grant.scopes,
      resources: code.grant.resources,
      // Public clients' refresh tokens are bound to their DPoP key (RFC 9449 §5).
      jkt: ctx.client.authMethod === 'none' ? (ctx.dpop?.jkt ?? null) : null,
    },
    { refreshTokens: ports.refreshTokens, settings: ctx.lifetimes },
    ctx.now,
  );
  const found = await ports.refreshTokens.find(ctx.tenant.id, sha256Hex(token));
  return { token, familyId: found!.family.id };
}

/** The profile claims of the granted scopes, unless the tenant keeps ID tokens minimal. */
async function profileClaims(ctx: GrantContext, ports: AuthorizationCodeGrantPorts, code: CodeRecord): Promise<Record<string, unknown>> {
  if (ctx.lifetimes.idTokenClaims === 'minimal' || !ports.profiles) return {};
  const scopes = code.grant.scopes;
  if (!scopes.includes('email') && !scopes.includes('profile')) return {};
  const user = await ports.profiles.profile(ctx.tenant.id, code.userId);
  return user ? idTokenProfileClaims(user, scopes) : {};
}

async function handle(ctx: GrantContext, ports: AuthorizationCodeGrantPorts): Promise<TokenResponse> {
  const codeHash = sha256Hex(requiredParam(ctx.req.body, 'code'));
  const code = await redeem(ctx, ports, codeHash);
  checkRedirectUri(ctx, code);
  checkPkce(ctx, code);
  checkDpopKey(ctx, code);
  const scopes = code.grant.scopes;
  const { alg, ttlSeconds: ttl } = await ctx.tokenPolicy({ audience: code.grant.resources, scopes, jkt: ctx.dpop?.jkt });
  const at = await issueAccessToken(
    ctx.tenant,
    { sub: code.userId, clientId: ctx.client.id, scopes, audience: code.grant.resources, jkt: ctx.dpop?.jkt, ttlSeconds: ttl, alg },
    { keys: ports.keys, now: ctx.now },
  );
  const rt = await maybeRefreshToken(ctx, ports, code);
  await ports.codes.recordIssued(ctx.tenant.id, codeHash, { jti: at.jti, exp: ctx.now + ttl * 1000, family: rt?.familyId ?? null });
  const settings = await ports.codes.clientSettings(ctx.tenant.id, ctx.client.id);
  const idToken = scopes.includes('openid')
    ? await signIdToken(
        ctx.tenant,
        {
          sub: code.userId,
          clientId: ctx.client.id,
          alg: settings.idTokenAlg as IdTokenAlg,
          authTime: code.grant.authTime,
          nonce: code.grant.nonce,
          accessToken: at.token,
          sessionId: code.grant.sessionId,
          amr: code.grant.amr ?? ['pwd'],
          ...(code.grant.idp ? { idp: code.grant.idp } : {}),
          profile: await profileClaims(ctx, ports, code),
          ttlSeconds: ttl,
        },
        { keys: ports.keys, now: ctx.now },
      )
    : undefined;
  return {
    access_token: at.token,
    token_type: at.tokenType,
    expires_in: at.expiresIn,
    ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
    ...(rt ? { refresh_token: rt.token } : {}),
    ...(idToken ? { id_token: idToken } : {}),
  };
}

export function authorizationCodeGrant(ports: AuthorizationCodeGrantPorts): GrantHandler {
  return { publicClients: true, handle: (ctx) => handle(ctx, ports) };
}
