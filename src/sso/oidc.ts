/**
 * The OIDC side of an SSO connection, on the one upstream client (src/upstream/): discovery at
 * registration, the authorization URL (state, nonce, PKCE), and the callback (the RFC 9207 `iss`
 * and `state` checks, the code exchange, the ID token's signature, algorithm, `iss`, `aud`,
 * `exp` and `nonce`). Framework-free.
 */
import { checkEgressUrlResolved } from '../egress/url.js';
import { errors } from '../kernel/errors.js';
import type { OidcSettings, UpstreamMetadata } from '../storage/repos/sso-connections.js';
import {
  idTokenAlgorithms,
  newRoundTrip as newTrip,
  type RoundTripSecrets,
  type UpstreamClient,
  UpstreamError,
  type UpstreamProvider,
} from '../upstream/client.js';

export { chooseTokenAuthMethod } from '../upstream/client.js';

/** The ID-token algorithm an upstream's metadata offers first among the asymmetric ones (none: the upstream cannot be used). */
export function chooseIdTokenAlg(metadata: UpstreamMetadata): string | undefined {
  return idTokenAlgorithms(metadata)[0];
}

/** A short, secret-free description of an upstream failure (for error descriptions and logs). */
export function describe(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 200);
}

/**
 * Discovers an issuer (`/.well-known/openid-configuration`, whose `issuer` must be the one
 * given): the URL is checked against the egress policy first, and fetched through egress/fetch,
 * which refuses any address the policy does not allow (http only to allow-listed addresses).
 */
export async function discoverIssuer(issuer: string, upstream: UpstreamClient): Promise<UpstreamMetadata> {
  const { policy, resolver } = upstream.http;
  const decision = await checkEgressUrlResolved(issuer, policy, { field: 'issuer', resolver });
  if (!decision.ok) throw decision.error;
  let metadata: UpstreamMetadata;
  try {
    metadata = (await upstream.discover(issuer)).metadata;
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    throw errors.invalidRequest(`issuer: OpenID Provider discovery failed (${describe(err)})`);
  }
  for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    const url = metadata[endpoint];
    if (typeof url !== 'string') throw errors.invalidRequest(`issuer: the discovery document has no ${endpoint}`);
    const check = await checkEgressUrlResolved(url, policy, { field: `issuer: ${endpoint}`, resolver });
    // The authorization endpoint is visited by browsers, not by us: only its shape matters.
    if (!check.ok && endpoint !== 'authorization_endpoint') throw check.error;
  }
  return metadata;
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The connection as the upstream client sees it: endpoints and algorithms from the upstream's own metadata. */
function providerOf(settings: OidcSettings): UpstreamProvider {
  const m = settings.metadata;
  return {
    issuer: m.issuer,
    authorizationEndpoint: text(m.authorization_endpoint) ?? '',
    tokenEndpoint: text(m.token_endpoint) ?? '',
    revocationEndpoint: text(m.revocation_endpoint),
    userinfoEndpoint: text(m.userinfo_endpoint),
    jwksUri: text(m.jwks_uri),
    clientId: settings.clientId,
    tokenEndpointAuthMethod:
      settings.tokenAuthMethod === 'client_secret_post' || settings.tokenAuthMethod === 'none' ? settings.tokenAuthMethod : 'client_secret_basic',
    issParameterSupported: m.authorization_response_iss_parameter_supported === true,
    idTokenAlgs: idTokenAlgorithms(m),
  };
}

/** What one upstream round trip must remember (stored encrypted, consumed once): always a nonce. */
export type OidcRoundTrip = RoundTripSecrets & { nonce: string };

export function newRoundTrip(settings: OidcSettings): OidcRoundTrip {
  return newTrip({ pkce: settings.pkce, nonce: true }) as OidcRoundTrip;
}

/** The upstream authorization URL of a round trip. */
export function authorizationUrl(
  settings: OidcSettings,
  upstream: UpstreamClient,
  redirectUri: string,
  trip: OidcRoundTrip,
  loginHint?: string,
): Promise<string> {
  return upstream.authorizationUrl(providerOf(settings), { redirectUri, scopes: settings.scopes, trip, params: loginHint ? { login_hint: loginHint } : {} });
}

/** Why a callback was refused: the `reason` of `sso.login.failed`. */
export type OidcFailure = 'upstream_error' | 'token_error' | 'invalid_response';

export class OidcCallbackError extends Error {
  constructor(
    readonly reason: OidcFailure,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

const failureOf = (err: UpstreamError): OidcFailure => (err.kind === 'denied' ? 'upstream_error' : err.kind === 'refused' ? 'token_error' : 'invalid_response');

/**
 * The callback: the authorization response is checked (`state`, RFC 9207 `iss` when the upstream
 * advertises it, `error`), the code is exchanged (with the PKCE verifier), and the ID token is
 * validated (upstream/client.ts). Returns the ID token's claims.
 */
export async function completeCallback(
  settings: OidcSettings,
  secret: string | null,
  upstream: UpstreamClient,
  params: URLSearchParams,
  redirectUri: string,
  trip: OidcRoundTrip,
): Promise<Record<string, unknown>> {
  let claims: Record<string, unknown> | null;
  try {
    claims = (await upstream.exchangeCode(providerOf(settings), secret, params, { redirectUri, trip })).idTokenClaims;
  } catch (err) {
    if (err instanceof UpstreamError) throw new OidcCallbackError(failureOf(err), describe(err));
    throw err;
  }
  if (!claims) throw new OidcCallbackError('invalid_response', 'no ID token');
  return claims;
}
