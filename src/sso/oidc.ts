/**
 * The OIDC relying party of an SSO connection, on openid-client: discovery, the authorization
 * URL, and the callback (code exchange, ID-token validation with `nonce`, `state`, RFC 9207
 * `iss`, PKCE). Every request goes out through the egress agent. Framework-free.
 */
import * as client from 'openid-client';
import { checkEgressUrlResolved } from '../egress/url.js';
import { errors } from '../kernel/errors.js';
import type { OidcSettings, UpstreamMetadata } from '../storage/repos/sso-connections.js';
import { type UpstreamHttp, upstreamFetch } from '../upstream/http.js';

/** Asymmetric JWS algorithms we accept from an upstream, in order of preference. */
const ASYMMETRIC_ALGS = ['RS256', 'ES256', 'PS256', 'EdDSA', 'Ed25519', 'ES384', 'RS384', 'PS384', 'ES512', 'RS512', 'PS512'];

/** openid-client's fetch: egress/fetch with the upstream limits. */
function egressFetch(http: UpstreamHttp): client.CustomFetch {
  return (url, options) => upstreamFetch(http, url, { method: options.method, headers: options.headers as Record<string, string>, body: options.body as string | undefined, signal: options.signal });
}

/**
 * The ID-token algorithm taken from the upstream's own `id_token_signing_alg_values_supported`
 * (RS256 when it lists none, as OIDC Discovery defines): an asymmetric one only, never `none`
 * or an HMAC algorithm keyed with a public key.
 */
export function chooseIdTokenAlg(metadata: UpstreamMetadata): string | undefined {
  const listed = metadata.id_token_signing_alg_values_supported;
  const offered = Array.isArray(listed) ? listed.filter((a): a is string => typeof a === 'string') : ['RS256'];
  return ASYMMETRIC_ALGS.find((a) => offered.includes(a));
}

/** client_secret_basic unless the upstream lists only client_secret_post; `none` without a secret. */
export function chooseTokenAuthMethod(metadata: UpstreamMetadata, hasSecret: boolean): string | undefined {
  if (!hasSecret) return 'none';
  const listed = metadata.token_endpoint_auth_methods_supported;
  const offered = Array.isArray(listed) ? listed : ['client_secret_basic'];
  if (offered.includes('client_secret_basic')) return 'client_secret_basic';
  if (offered.includes('client_secret_post')) return 'client_secret_post';
  return undefined;
}

const insecure = (url: string) => (url.startsWith('http:') ? [client.allowInsecureRequests] : []);

/**
 * Discovers an issuer (`/.well-known/openid-configuration`, whose `issuer` must be the one
 * given): the URL is checked against the egress policy first, and fetched through the agent,
 * which refuses any address the policy does not allow (http only to allow-listed addresses).
 */
export async function discoverIssuer(issuer: string, http: UpstreamHttp): Promise<UpstreamMetadata> {
  const decision = await checkEgressUrlResolved(issuer, http.policy, { field: 'issuer', resolver: http.resolver });
  if (!decision.ok) throw decision.error;
  let config: client.Configuration;
  try {
    config = await client.discovery(new URL(issuer), 'keyhall', undefined, undefined, {
      [client.customFetch]: egressFetch(http),
      execute: insecure(issuer),
      timeout: Math.ceil(http.timeoutMs / 1000),
      algorithm: 'oidc',
    });
  } catch (err) {
    throw errors.invalidRequest(`issuer: OpenID Provider discovery failed (${describe(err)})`);
  }
  const metadata = { ...config.serverMetadata() } as UpstreamMetadata;
  for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    const url = metadata[endpoint];
    if (typeof url !== 'string') throw errors.invalidRequest(`issuer: the discovery document has no ${endpoint}`);
    const check = await checkEgressUrlResolved(url, http.policy, { field: `issuer: ${endpoint}`, resolver: http.resolver });
    // The authorization endpoint is visited by browsers, not by us: only its shape matters.
    if (!check.ok && endpoint !== 'authorization_endpoint') throw check.error;
  }
  return metadata;
}

/** A short, secret-free description of an upstream failure (for error descriptions and logs). */
export function describe(err: unknown): string {
  if (err instanceof client.ResponseBodyError) return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`.slice(0, 200);
  if (err instanceof client.AuthorizationResponseError) return err.error.slice(0, 100);
  // openid-client wraps what fetch threw ("something went wrong"): the innermost cause says what happened.
  let e = err as { message?: string; cause?: unknown } | undefined;
  for (let depth = 0; depth < 4 && e?.cause instanceof Error; depth++) e = e.cause as { message?: string; cause?: unknown };
  return (e?.message ?? String(err)).slice(0, 200);
}

function configurationOf(settings: OidcSettings, secret: string | null, http: UpstreamHttp): client.Configuration {
  const auth =
    settings.tokenAuthMethod === 'none' || secret === null
      ? client.None()
      : settings.tokenAuthMethod === 'client_secret_post'
        ? client.ClientSecretPost(secret)
        : client.ClientSecretBasic(secret);
  const config = new client.Configuration(settings.metadata as client.ServerMetadata, settings.clientId, { id_token_signed_response_alg: settings.idTokenAlg }, auth);
  config[client.customFetch] = egressFetch(http);
  config.timeout = Math.ceil(http.timeoutMs / 1000);
  if (settings.issuer.startsWith('http:')) client.allowInsecureRequests(config);
  return config;
}

/** What one upstream round trip must remember (stored encrypted, consumed once). */
export interface OidcRoundTrip {
  state: string;
  nonce: string;
  codeVerifier: string | null;
}

export function newRoundTrip(settings: OidcSettings): OidcRoundTrip {
  return { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: settings.pkce ? client.randomPKCECodeVerifier() : null };
}

/** The upstream authorization URL of a round trip. */
export async function authorizationUrl(settings: OidcSettings, http: UpstreamHttp, redirectUri: string, trip: OidcRoundTrip, loginHint?: string): Promise<string> {
  const params: Record<string, string> = {
    redirect_uri: redirectUri,
    scope: settings.scopes.join(' '),
    state: trip.state,
    nonce: trip.nonce,
    ...(loginHint ? { login_hint: loginHint } : {}),
  };
  if (trip.codeVerifier !== null) {
    params.code_challenge = await client.calculatePKCECodeChallenge(trip.codeVerifier);
    params.code_challenge_method = 'S256';
  }
  return client.buildAuthorizationUrl(configurationOf(settings, null, http), params).href;
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

/**
 * The callback: the authorization response is checked (`state`, RFC 9207 `iss` when the upstream
 * advertises it, `error`), the code is exchanged (with the PKCE verifier), and the ID token is
 * validated (signature with the upstream's JWKS and the chosen algorithm, `iss`, `aud`, `exp`,
 * `nonce`). Returns the ID token's claims.
 */
export async function completeCallback(settings: OidcSettings, secret: string | null, http: UpstreamHttp, callbackUrl: URL, trip: OidcRoundTrip): Promise<Record<string, unknown>> {
  const config = configurationOf(settings, secret, http);
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      expectedState: trip.state,
      expectedNonce: trip.nonce,
      idTokenExpected: true,
      ...(trip.codeVerifier !== null ? { pkceCodeVerifier: trip.codeVerifier } : {}),
    });
  } catch (err) {
    if (err instanceof client.AuthorizationResponseError) throw new OidcCallbackError('upstream_error', describe(err));
    if (err instanceof client.ResponseBodyError) throw new OidcCallbackError('token_error', describe(err));
    throw new OidcCallbackError('invalid_response', describe(err));
  }
  const claims = tokens.claims();
  if (!claims) throw new OidcCallbackError('invalid_response', 'no ID token');
  return { ...claims };
}
