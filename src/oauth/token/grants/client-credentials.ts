/** client_credentials (RFC 6749 §4.4): the client acts for itself; no refresh token (§4.4.3). */
import { issueAccessToken, type KeySource } from '../../tokens/access-token.js';
import { narrowScope, requestedResources } from '../targets.js';
import type { GrantContext, GrantHandler, TokenResponse } from '../types.js';

export function clientCredentialsGrant(ports: { keys: KeySource }): GrantHandler {
  async function handle(ctx: GrantContext): Promise<TokenResponse> {
    const { tenant, client, req } = ctx;
    const scopes = narrowScope(req, client.scopes);
    const audience = requestedResources(req, [...client.allowedResources, tenant.issuer]);
    const { alg, ttlSeconds } = await ctx.tokenPolicy({ audience, scopes, jkt: ctx.dpop?.jkt });
    const at = await issueAccessToken(
      tenant,
      { sub: client.id, clientId: client.id, scopes, audience, jkt: ctx.dpop?.jkt, ttlSeconds, alg },
      { keys: ports.keys, now: ctx.now },
    );
    return {
      access_token: at.token,
      token_type: at.tokenType,
      expires_in: at.expiresIn,
      ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
    };
  }
  return { publicClients: false, handle };
}
