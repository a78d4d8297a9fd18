/**
 * Token exchange (RFC 8693): a client trades a subject access token (optionally with an actor
 * token) for a new access token with a narrowed audience and scope, carrying `act`.
 */
import { oauthErrors } from '../../errors.js';
import { param, params, requiredParam } from '../../params.js';
import { type Actor, issueAccessToken, type KeySource } from '../../tokens/access-token.js';
import { type AccessTokenClaims, TokenInvalid, verifyAccessToken } from '../../tokens/verify-access-token.js';
import type { RevokedTokenStore, TokenExchangePolicy } from '../../types.js';
import { checkResourceSyntax, narrowScope } from '../targets.js';
import type { Atomically, GrantContext, GrantHandler, TokenResponse } from '../types.js';

export interface TokenExchangeGrantPorts {
  keys: KeySource;
  revoked: RevokedTokenStore;
  atomically: Atomically;
}

export const TOKEN_TYPE_ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

function policyOf(ctx: GrantContext): TokenExchangePolicy {
  const policy = ctx.client.tokenExchange;
  if (!policy) throw oauthErrors.unauthorizedClient('client has no token-exchange policy');
  return policy;
}

async function verifyPresentedToken(
  ctx: GrantContext,
  ports: TokenExchangeGrantPorts,
  token: string,
  type: string | undefined,
  what: string,
): Promise<AccessTokenClaims> {
  if (type === undefined) throw oauthErrors.invalidRequest(`missing ${what}_type`);
  if (type !== TOKEN_TYPE_ACCESS_TOKEN) throw oauthErrors.invalidRequest(`unsupported ${what}_type`);
  try {
    return await verifyAccessToken(token, ctx.tenant, { keys: ports.keys, revoked: ports.revoked, now: ctx.now });
  } catch (err) {
    if (err instanceof TokenInvalid) throw oauthErrors.invalidRequest(`invalid ${what}`);
    throw err;
  }
}

function checkSubjectAllowed(policy: TokenExchangePolicy, subject: AccessTokenClaims): void {
  if (!policy.subject_clients.includes('*') && !policy.subject_clients.includes(subject.client_id)) {
    throw oauthErrors.invalidRequest('this client may not exchange tokens of that subject client');
  }
}

async function actorOf(ctx: GrantContext, ports: TokenExchangeGrantPorts): Promise<AccessTokenClaims | undefined> {
  const token = param(ctx.req.body, 'actor_token');
  const type = param(ctx.req.body, 'actor_token_type');
  if (token === undefined && type !== undefined) throw oauthErrors.invalidRequest('actor_token_type without actor_token');
  if (token === undefined) return undefined;
  return verifyPresentedToken(ctx, ports, token, type, 'actor_token');
}

/** RFC 8693 §4.4: when the subject token names who may act for it, the actor must be that one. */
function checkMayAct(subject: AccessTokenClaims, actor: Actor): void {
  const mayAct = subject.may_act as { sub?: unknown } | undefined;
  if (mayAct && mayAct.sub !== actor.sub) throw oauthErrors.invalidRequest('the actor is not allowed by may_act');
}

/** The requested `resource`/`audience` values, each allowed by the client's exchange policy. */
function targetAudience(ctx: GrantContext, policy: TokenExchangePolicy): string[] {
  const resources = params(ctx.req.body, 'resource');
  for (const r of resources) checkResourceSyntax(r);
  const requested = [...new Set([...resources, ...params(ctx.req.body, 'audience')])];
  const allowed = new Set([...policy.audiences, ...ctx.client.allowedResources]);
  for (const aud of requested) if (!allowed.has(aud)) throw oauthErrors.invalidTarget(`audience not allowed: ${aud}`);
  return requested;
}

function checkRequestedType(ctx: GrantContext): void {
  const requested = param(ctx.req.body, 'requested_token_type');
  if (requested !== undefined && requested !== TOKEN_TYPE_ACCESS_TOKEN) throw oauthErrors.invalidRequest('unsupported requested_token_type');
}

/** The new actor, with the subject token's own `act` chain nested under it. */
function nestedActor(ctx: GrantContext, subject: AccessTokenClaims, actor: AccessTokenClaims | undefined): Actor {
  const current: Actor = actor ? { sub: actor.sub, client_id: actor.client_id } : { sub: ctx.client.id, client_id: ctx.client.id };
  if (subject.act) current.act = subject.act as Actor;
  return current;
}

async function handle(ctx: GrantContext, ports: TokenExchangeGrantPorts): Promise<TokenResponse> {
  const policy = policyOf(ctx);
  const subject = await verifyPresentedToken(
    ctx,
    ports,
    requiredParam(ctx.req.body, 'subject_token'),
    param(ctx.req.body, 'subject_token_type'),
    'subject_token',
  );
  checkSubjectAllowed(policy, subject);
  const actorToken = await actorOf(ctx, ports);
  const act = nestedActor(ctx, subject, actorToken);
  checkMayAct(subject, act);
  checkRequestedType(ctx);
  const audience = targetAudience(ctx, policy);
  const scopes = narrowScope(ctx.req, subject.scope ? subject.scope.split(' ') : []);
  const { alg, ttlSeconds } = await ctx.tokenPolicy({ audience, scopes, jkt: ctx.dpop?.jkt });
  const at = await issueAccessToken(
    ctx.tenant,
    { sub: subject.sub, clientId: ctx.client.id, scopes, audience, jkt: ctx.dpop?.jkt, act, ttlSeconds, alg },
    { keys: ports.keys, now: ctx.now },
  );
  await ports.atomically((unit) =>
    unit.audit({
      type: 'token.exchanged',
      tenantId: ctx.tenant.id,
      data: { client_id: ctx.client.id, sub: subject.sub, act, aud: audience, subject_client_id: subject.client_id },
    }),
  );
  return {
    access_token: at.token,
    issued_token_type: TOKEN_TYPE_ACCESS_TOKEN,
    token_type: at.tokenType,
    expires_in: at.expiresIn,
    ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
  };
}

export function tokenExchangeGrant(ports: TokenExchangeGrantPorts): GrantHandler {
  return { publicClients: false, handle: (ctx) => handle(ctx, ports) };
}
