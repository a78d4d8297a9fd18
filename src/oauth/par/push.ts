/**
 * POST /par (RFC 9126): an authenticated client pushes its authorization request and gets a
 * single-use `request_uri` bound to it. A DPoP proof sent here binds the future code to its key
 * (RFC 9449 §10.1).
 */
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { randomBase64url } from '../../kernel/ids.js';
import { AuthorizeError } from '../authorize/errors.js';
import type { SigninStore } from '../authorize/types.js';
import { verifyRequestObject } from '../authorize/request-object.js';
import { checkRedirectUri, PAR_URN, single, validateAuthorizationRequest } from '../authorize/validate.js';
import { hasRegisteredKeys } from '../client-auth/client-keys.js';
import { checkProfileClientAuth } from '../profile.js';
import { authenticateClient, clientAuthDeps } from '../client-auth/authenticate.js';
import { authorizationServerProof } from '../dpop/proofs.js';
import { oauthErrors } from '../errors.js';
import type { OAuthDeps } from '../token/types.js';
import type { OAuthHttpRequest, OAuthTenant } from '../types.js';

export const PAR_PATH = '/par';

export interface ParResponse {
  request_uri: string;
  expires_in: number;
}

/** At /par every authorization error is a JSON 400 (RFC 9126 §2.3). */
function asJson(err: unknown): unknown {
  if (err instanceof AuthorizeError) return oauthErrors.pushedRequest(err.code === 'invalid_request_uri' ? 'invalid_request' : err.code, err.description);
  return err;
}

export async function handlePushedAuthorizationRequest(
  req: OAuthHttpRequest,
  tenant: OAuthTenant,
  deps: OAuthDeps,
  signin: { store: SigninStore; parTtlSeconds: number },
): Promise<ParResponse> {
  const now = deps.clock.now();
  const client = await authenticateClient(req, tenant, clientAuthDeps(deps, now));
  const settings = await signin.store.clientSettings(tenant.id, client.id);
  checkProfileClientAuth(client, settings.profile);
  // With KEYHALL_DPOP_NONCE the proof must carry a server nonce here too, as at /token.
  const jkt = (await authorizationServerProof(req, tenant, deps, now))?.jkt;
  let request;
  try {
    // RFC 9126 §3: a pushed request may be a signed request object (RFC 9101); only its
    // parameters count. A client without registered keys gets request_not_supported.
    if (req.body.request_uri !== undefined) throw oauthErrors.invalidRequest('request_uri is not allowed in a pushed request');
    const requestObject = single(req.body, 'request');
    const signed = requestObject !== undefined && hasRegisteredKeys(client);
    const params = signed ? await verifyRequestObject(requestObject, client, tenant, { now, remoteKeys: deps.remoteKeys }) : req.body;
    const redirectUri = checkRedirectUri(client, params);
    request = validateAuthorizationRequest(params, client, redirectUri, { tenant, settings, pushed: true, proofJkt: jkt, signed });
  } catch (err) {
    throw asJson(err);
  }
  const requestUri = `${PAR_URN}${randomBase64url(32)}`;
  await signin.store.savePar(
    sha256Hex(requestUri),
    { tenantId: tenant.id, clientId: client.id, request, expiresAt: now + signin.parTtlSeconds * 1000, consumedAt: null },
    now,
  );
  return { request_uri: requestUri, expires_in: signin.parTtlSeconds };
}
