/**
 * OID4VCI 1.0 §6.1 pre-authorized code grant: a wallet redeems the code of a credential offer
 * (with its tx_code, `user_pin` in older drafts) without client authentication. The token's
 * `aud` is the credential issuer (the tenant issuer) and its `credential_offer_id` claim makes it
 * usable only at the credential endpoint (tokens/verify-access-token.ts). DPoP is optional and
 * honoured: a proof binds the token.
 */
import { oauthErrors } from '../../errors.js';
import { param } from '../../params.js';
import { issueAccessToken, type KeySource } from '../../tokens/access-token.js';
import type { AnonymousGrantContext, AnonymousGrantHandler, TokenResponse } from '../types.js';

/** The `client_id` claim of a token no client asked for: not a shape registered clients can have (`cli_…`). */
export const ANONYMOUS_WALLET = 'anonymous-wallet';

export type RedeemOutcome =
  | { ok: true; offerId: string; subject: string }
  | { ok: false; reason: 'unknown' | 'used' | 'expired' | 'tx_code_missing' | 'tx_code_unexpected' | 'tx_code_wrong' | 'tx_code_exhausted' };

/** The offers' pre-authorized codes (src/credentials/service.ts): single use, with counted tx_code attempts. */
export interface PreAuthorizedCodes {
  redeem(tenantId: string, code: string, txCode: string | undefined, now: number): Promise<RedeemOutcome>;
}

const REFUSALS: Record<Exclude<RedeemOutcome, { ok: true }>['reason'], () => Error> = {
  unknown: () => oauthErrors.invalidGrant('unknown pre-authorized code'),
  used: () => oauthErrors.invalidGrant('the pre-authorized code was already used'),
  expired: () => oauthErrors.invalidGrant('the pre-authorized code has expired'),
  tx_code_missing: () => oauthErrors.invalidRequest('this offer requires tx_code'),
  tx_code_unexpected: () => oauthErrors.invalidRequest('this offer has no tx_code'),
  tx_code_wrong: () => oauthErrors.invalidGrant('wrong tx_code'),
  tx_code_exhausted: () => oauthErrors.invalidGrant('too many wrong tx_code attempts; the pre-authorized code is no longer valid'),
};

function txCodeOf(ctx: AnonymousGrantContext): string | undefined {
  const txCode = param(ctx.req.body, 'tx_code');
  const userPin = param(ctx.req.body, 'user_pin');
  if (txCode !== undefined && userPin !== undefined && txCode !== userPin) throw oauthErrors.invalidRequest('send tx_code or user_pin, not both');
  return txCode ?? userPin;
}

export function preAuthorizedCodeGrant(ports: { keys: KeySource; codes: PreAuthorizedCodes }): AnonymousGrantHandler {
  async function handle(ctx: AnonymousGrantContext): Promise<TokenResponse> {
    const code = param(ctx.req.body, 'pre-authorized_code');
    if (code === undefined) throw oauthErrors.invalidRequest('missing parameter pre-authorized_code');
    const outcome = await ports.codes.redeem(ctx.tenant.id, code, txCodeOf(ctx), ctx.now);
    if (!outcome.ok) throw REFUSALS[outcome.reason]();
    const jkt = ctx.dpop?.jkt;
    const at = await issueAccessToken(
      ctx.tenant,
      {
        sub: outcome.subject,
        clientId: ANONYMOUS_WALLET,
        scopes: [],
        audience: [ctx.tenant.issuer],
        jkt,
        ttlSeconds: ctx.lifetimes.accessTokenTtlSeconds,
        credentialOffer: outcome.offerId,
      },
      { keys: ports.keys, now: ctx.now },
    );
    return { access_token: at.token, token_type: at.tokenType, expires_in: at.expiresIn };
  }
  return { anonymous: true, handle };
}
