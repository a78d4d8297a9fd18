/**
 * authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6, RFC 9449 §10, OIDC Core §3.1.3): a code is
 * single-use, short-lived and bound to its client, redirect_uri, PKCE challenge and DPoP key. A
 * second redemption fails and revokes what the first one issued (RFC 6749 §4.1.2).
 */
import { createHash } from 'node:crypto';
import { sha256Hex } from '../../../kernel/crypto/hash.js';
import type { CodeRecord, SigninStore } from '../../authorize/types.js';
import { oauthErrors } from '../../errors.js';
import { param, requiredParam } from '../../params.js';
import type { OrganizationPort } from '../../organization.js';
import type { KeySource } from '../../tokens/access-token.js';
import type { RefreshTokenStore } from '../../types.js';
import type { UserProfileSource } from '../../userinfo/claims.js';
import { issueUserTokens } from '../user-tokens.js';
import type { Atomically, GrantContext, GrantHandler, TokenResponse } from '../types.js';

/** The code store: single-use codes and the tokens each one issued (src/storage/repos/signin-store.ts). */
export type CodeStore = Pick<SigninStore, 'redeemCode' | 'recordIssued' | 'recordSessionClient' | 'clientSettings'>;

export interface AuthorizationCodeGrantPorts {
  codes: CodeStore;
  /** The user's profile, for the ID token's profile claims (none without it). */
  profiles?: UserProfileSource | undefined;
  refreshTokens: RefreshTokenStore;
  keys: KeySource;
  atomically: Atomically;
  /** Organization claims of a code from `organization=` (docs/authorization.md). */
  organizations?: OrganizationPort | undefined;
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

async function handle(ctx: GrantContext, ports: AuthorizationCodeGrantPorts): Promise<TokenResponse> {
  const codeHash = sha256Hex(requiredParam(ctx.req.body, 'code'));
  const code = await redeem(ctx, ports, codeHash);
  checkRedirectUri(ctx, code);
  checkPkce(ctx, code);
  checkDpopKey(ctx, code);
  const issued = await issueUserTokens(
    ctx,
    {
      clientSettings: (t, c) => ports.codes.clientSettings(t, c),
      recordSessionClient: (...a) => ports.codes.recordSessionClient(...a),
      profiles: ports.profiles,
      refreshTokens: ports.refreshTokens,
      keys: ports.keys,
      organizations: ports.organizations,
    },
    {
      userId: code.userId,
      scopes: code.grant.scopes,
      resources: code.grant.resources,
      nonce: code.grant.nonce,
      authTime: code.grant.authTime,
      sessionId: code.grant.sessionId,
      amr: code.grant.amr ?? ['pwd'],
      organizationId: code.grant.organizationId,
      idp: code.grant.idp ?? null,
    },
  );
  await ports.codes.recordIssued(ctx.tenant.id, codeHash, { jti: issued.jti, exp: issued.exp, family: issued.familyId });
  return issued.response;
}

export function authorizationCodeGrant(ports: AuthorizationCodeGrantPorts): GrantHandler {
  return { publicClients: true, handle: (ctx) => handle(ctx, ports) };
}
