/**
 * urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4–3.5): the client polls with its
 * device_code until the person approves or denies at /activate. Answers, in order of the
 * authorization's state: unknown or another client's → invalid_grant; already redeemed →
 * invalid_grant; expired → expired_token; denied → access_denied; still pending →
 * authorization_pending, or slow_down when the client polled sooner than its interval (which
 * then grows by 5 seconds). Approved: consumed once, and the tokens are those of the
 * authorization code grant (user-tokens.ts).
 */
import { sha256Hex } from '../../../kernel/crypto/hash.js';
import type { DeviceCodeStore } from '../../device/types.js';
import { oauthErrors } from '../../errors.js';
import { requiredParam } from '../../params.js';
import { issueUserTokens, type UserTokenPorts } from '../user-tokens.js';
import type { GrantContext, GrantHandler, TokenResponse } from '../types.js';

/** RFC 8628 §3.5: each slow_down adds five seconds to the interval. */
export const SLOW_DOWN_STEP_SECONDS = 5;

export interface DeviceCodeGrantPorts extends UserTokenPorts {
  devices: DeviceCodeStore;
}

async function handle(ctx: GrantContext, ports: DeviceCodeGrantPorts): Promise<TokenResponse> {
  const hash = sha256Hex(requiredParam(ctx.req.body, 'device_code'));
  const rec = await ports.devices.find(ctx.tenant.id, hash);
  if (!rec || rec.clientId !== ctx.client.id) throw oauthErrors.invalidGrant('unknown device_code');
  if (rec.consumedAt !== null) throw oauthErrors.invalidGrant('device_code was already used');
  if (rec.expiresAt <= ctx.now) throw oauthErrors.expiredToken('the device_code has expired; start again');
  if (rec.status === 'denied') throw oauthErrors.accessDenied('the user denied the request');
  if (rec.status === 'pending') {
    const tooSoon = rec.lastPolledAt !== null && ctx.now - rec.lastPolledAt < rec.intervalSeconds * 1000;
    const interval = tooSoon ? rec.intervalSeconds + SLOW_DOWN_STEP_SECONDS : rec.intervalSeconds;
    await ports.devices.polled(ctx.tenant.id, hash, ctx.now, interval);
    if (tooSoon) throw oauthErrors.slowDown(`polling too fast: wait ${interval} seconds between requests`);
    throw oauthErrors.authorizationPending('the user has not approved the request yet');
  }
  if (!(await ports.devices.consume(ctx.tenant.id, hash, ctx.now))) throw oauthErrors.invalidGrant('device_code was already used');
  const issued = await issueUserTokens(ctx, ports, {
    userId: rec.userId!,
    scopes: rec.scopes,
    resources: rec.resources,
    nonce: null,
    authTime: rec.authTime!,
    sessionId: rec.sessionId,
    amr: rec.amr ?? ['pwd'],
  });
  return issued.response;
}

export function deviceCodeGrant(ports: DeviceCodeGrantPorts): GrantHandler {
  return { publicClients: true, handle: (ctx) => handle(ctx, ports) };
}
