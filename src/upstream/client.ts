/**
 * The one client Keyhall speaks to upstream identity providers with (SSO over OIDC, the
 * connected-accounts vault, social sign-in), on oauth4webapi: OpenID Connect discovery, the
 * authorization URL (state, PKCE, nonce), the callback (the authorization response with its
 * RFC 9207 `iss` check, the code grant, the ID token's signature, `iss`, `aud`, `exp`, `nonce`,
 * and an algorithm the upstream's metadata lists), userinfo (OIDC, or a generic OAuth 2.0 JSON
 * document read by field paths), refresh and RFC 7009 revocation. Every request goes through
 * egress/fetch (upstream/http.ts). Framework-free.
 */
import { randomBytes } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { EgressFetchError } from '../egress/fetch.js';
import type { Clock } from '../kernel/clock.js';
import { type UpstreamHttp, upstreamFetch } from './http.js';

export type UpstreamAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** What the client needs to know of a provider. */
export interface UpstreamProvider {
  /** The issuer; null for a generic OAuth 2.0 provider that names none (no `iss` check then). */
  issuer: string | null;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  userinfoEndpoint?: string | null;
  /** The upstream's JWKS: with it, an ID token's signature is verified. */
  jwksUri?: string | null;
  clientId: string;
  tokenEndpointAuthMethod: UpstreamAuthMethod;
  /** The upstream's metadata says it sends `iss` in authorization responses (RFC 9207). */
  issParameterSupported: boolean;
  /** ID-token algorithms accepted: those the upstream's metadata lists (idTokenAlgorithms). */
  idTokenAlgs?: string[];
}

/** What one round trip must remember (stored sealed, consumed once). */
export interface RoundTripSecrets {
  state: string;
  /** Sent when an ID token is expected; the ID token must carry it back. */
  nonce: string | null;
  /** The PKCE verifier, or null when the provider does not take PKCE. */
  codeVerifier: string | null;
}

export interface UpstreamTokens {
  accessToken: string;
  refreshToken: string | null;
  /** Seconds, or null when the upstream gave no lifetime. */
  expiresIn: number | null;
  scopes: string[] | null;
  /** The validated ID token's claims, when the upstream sent one. */
  idTokenClaims: Record<string, unknown> | null;
  /** The ID token's `sub`, when the upstream sent one. */
  subject: string | null;
}

export interface DiscoveredProvider {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  userinfoEndpoint: string | null;
  jwksUri: string | null;
  issParameterSupported: boolean;
  /** The whole discovery document. */
  metadata: Record<string, unknown> & { issuer: string };
}

/**
 * Why an upstream exchange failed: `denied` (the authorization response carries an OAuth
 * `error`, in `code`), `refused` (an endpoint answered with an OAuth error, in `code`),
 * `unreachable` (no answer in time, refused by the egress policy, connection failure),
 * `invalid_response` (an answer that is not a valid response: a bad ID token, a bad JSON body)
 * or `invalid_callback` (an authorization response that fails its checks: `state`, `iss`,
 * duplicate or missing parameters).
 */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly kind: 'denied' | 'refused' | 'unreachable' | 'invalid_response' | 'invalid_callback',
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Asymmetric JWS algorithms accepted from an upstream, in order of preference. */
const ASYMMETRIC_ALGS = ['RS256', 'ES256', 'PS256', 'EdDSA', 'Ed25519', 'ES384', 'RS384', 'PS384', 'ES512', 'RS512', 'PS512'];

/**
 * The ID-token algorithms of an upstream: the asymmetric ones its own
 * `id_token_signing_alg_values_supported` lists (RS256 when it lists none, as OIDC Discovery
 * defines), in order of preference; never `none` nor an HMAC keyed with a public key.
 */
export function idTokenAlgorithms(metadata: Record<string, unknown>): string[] {
  const listed = metadata.id_token_signing_alg_values_supported;
  const offered = Array.isArray(listed) ? listed.filter((a): a is string => typeof a === 'string') : ['RS256'];
  return ASYMMETRIC_ALGS.filter((a) => offered.includes(a));
}

/** client_secret_basic unless the upstream lists only client_secret_post; `none` without a secret. */
export function chooseTokenAuthMethod(metadata: Record<string, unknown>, hasSecret: boolean): UpstreamAuthMethod | undefined {
  if (!hasSecret) return 'none';
  const listed = metadata.token_endpoint_auth_methods_supported;
  const offered = Array.isArray(listed) ? listed : ['client_secret_basic'];
  if (offered.includes('client_secret_basic')) return 'client_secret_basic';
  if (offered.includes('client_secret_post')) return 'client_secret_post';
  return undefined;
}

const random = () => randomBytes(32).toString('base64url');

/** A fresh round trip: a 256-bit state, a nonce when an ID token is expected, a PKCE verifier. */
export function newRoundTrip(o: { pkce: boolean; nonce: boolean }): RoundTripSecrets {
  return { state: random(), nonce: o.nonce ? random() : null, codeVerifier: o.pkce ? random() : null };
}

/** Any failure as an UpstreamError of the right kind, with a short, secret-free message. */
function classify(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (err instanceof EgressFetchError) {
    return err.kind === 'too_large'
      ? new UpstreamError('invalid_response', err.message)
      : new UpstreamError('unreachable', `the upstream could not be reached: ${err.message}`);
  }
  if (err instanceof oauth.ResponseBodyError) {
    const description = err.error_description ? `: ${err.error_description.slice(0, 200)}` : '';
    return new UpstreamError('refused', `the upstream answered ${err.status} ${err.error}${description}`, err.error);
  }
  if (err instanceof oauth.AuthorizationResponseError) return new UpstreamError('denied', `the upstream returned ${err.error.slice(0, 100)}`, err.error);
  if (err instanceof oauth.OperationProcessingError || err instanceof oauth.UnsupportedOperationError || err instanceof TypeError) {
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof EgressFetchError) return classify(cause);
    return new UpstreamError('invalid_response', `invalid upstream response: ${err.message}`);
  }
  return new UpstreamError('unreachable', `the upstream could not be reached: ${(err as Error)?.message ?? String(err)}`);
}

export class UpstreamClient {
  constructor(
    /** How upstreams are reached (SAML metadata fetches use it too). */
    readonly http: UpstreamHttp,
    private readonly clock: Clock,
  ) {}

  /** oauth4webapi's fetch: egress/fetch with the upstream limits. */
  readonly #fetch = (url: string, init: oauth.CustomFetchOptions<string, unknown>): Promise<Response> =>
    upstreamFetch(this.http, url, { method: init.method, headers: init.headers, body: init.body as string | URLSearchParams | undefined });

  /** Request options: our fetch; `http:` is left to the egress policy (it allows it only to allowlisted addresses). */
  #options() {
    return { [oauth.customFetch]: this.#fetch, [oauth.allowInsecureRequests]: true } as const;
  }

  #as(p: UpstreamProvider): oauth.AuthorizationServer {
    return {
      // oauth4webapi needs an issuer; without a configured one the authorization endpoint's origin
      // stands in (and an `iss` in the response is not checked, see exchangeCode).
      issuer: p.issuer ?? new URL(p.authorizationEndpoint).origin,
      authorization_endpoint: p.authorizationEndpoint,
      token_endpoint: p.tokenEndpoint,
      ...(p.revocationEndpoint ? { revocation_endpoint: p.revocationEndpoint } : {}),
      ...(p.userinfoEndpoint ? { userinfo_endpoint: p.userinfoEndpoint } : {}),
      ...(p.jwksUri ? { jwks_uri: p.jwksUri } : {}),
      // Only what the metadata lists; RS256 (OIDC Discovery's default) for a provider without it.
      id_token_signing_alg_values_supported: p.idTokenAlgs ?? ['RS256'],
      authorization_response_iss_parameter_supported: p.issParameterSupported,
    };
  }

  #client(p: UpstreamProvider): oauth.Client {
    // Token times are judged by Keyhall's clock (the injected one in tests).
    return { client_id: p.clientId, [oauth.clockSkew]: Math.round((this.clock.now() - Date.now()) / 1000) };
  }

  #auth(p: UpstreamProvider, secret: string | null): oauth.ClientAuth {
    if (p.tokenEndpointAuthMethod === 'none' || secret === null) return oauth.None();
    return p.tokenEndpointAuthMethod === 'client_secret_post' ? oauth.ClientSecretPost(secret) : oauth.ClientSecretBasic(secret);
  }

  /** OpenID Connect discovery of `issuer` (the document's issuer must be the same). */
  async discover(issuer: string): Promise<DiscoveredProvider> {
    try {
      const url = new URL(issuer);
      const as = await oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, { ...this.#options(), algorithm: 'oidc' }));
      if (typeof as.authorization_endpoint !== 'string' || typeof as.token_endpoint !== 'string') {
        throw new UpstreamError('invalid_response', 'the discovery document lacks authorization_endpoint or token_endpoint');
      }
      const optional = (v: unknown) => (typeof v === 'string' ? v : null);
      return {
        issuer: as.issuer,
        authorizationEndpoint: as.authorization_endpoint,
        tokenEndpoint: as.token_endpoint,
        revocationEndpoint: optional(as.revocation_endpoint),
        userinfoEndpoint: optional(as.userinfo_endpoint),
        jwksUri: optional(as.jwks_uri),
        issParameterSupported: as.authorization_response_iss_parameter_supported === true,
        metadata: { ...as },
      };
    } catch (err) {
      throw classify(err);
    }
  }

  /** The authorization request URL: the round trip's state, nonce and S256 challenge, then the provider's extra parameters. */
  async authorizationUrl(
    p: UpstreamProvider,
    o: { redirectUri: string; scopes: string[]; trip: RoundTripSecrets; params?: Record<string, string> },
  ): Promise<string> {
    const url = new URL(p.authorizationEndpoint);
    for (const [k, v] of Object.entries(o.params ?? {})) url.searchParams.set(k, v);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', p.clientId);
    url.searchParams.set('redirect_uri', o.redirectUri);
    if (o.scopes.length > 0) url.searchParams.set('scope', o.scopes.join(' '));
    url.searchParams.set('state', o.trip.state);
    if (o.trip.nonce !== null) url.searchParams.set('nonce', o.trip.nonce);
    if (o.trip.codeVerifier !== null) {
      url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(o.trip.codeVerifier));
      url.searchParams.set('code_challenge_method', 'S256');
    }
    return url.href;
  }

  /**
   * The callback: validates the authorization response (`state`, `error`, and `iss` per RFC 9207:
   * required when the upstream advertises it, and equal to the issuer whenever present and the
   * issuer is known), redeems the code (with the PKCE verifier), then validates the ID token: its
   * algorithm among those the upstream's metadata lists, its signature by the upstream's JWKS,
   * `iss`, `aud`, `exp`, and `nonce` (required when the round trip sent one).
   */
  async exchangeCode(
    p: UpstreamProvider,
    secret: string | null,
    params: URLSearchParams,
    o: { redirectUri: string; trip: RoundTripSecrets },
  ): Promise<UpstreamTokens> {
    const as = this.#as(p);
    const client = this.#client(p);
    const response = new URLSearchParams(params);
    if (p.issuer === null) response.delete('iss');
    let validated: URLSearchParams;
    try {
      validated = oauth.validateAuthResponse(as, client, response, o.trip.state);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) throw classify(err);
      throw new UpstreamError('invalid_callback', (err as Error).message);
    }
    try {
      const res = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        this.#auth(p, secret),
        validated,
        o.redirectUri,
        o.trip.codeVerifier ?? oauth.nopkce,
        this.#options(),
      );
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        res,
        o.trip.nonce !== null ? { expectedNonce: o.trip.nonce, requireIdToken: true } : undefined,
      );
      const claims = oauth.getValidatedIdTokenClaims(tokens);
      if (claims && p.jwksUri) await oauth.validateApplicationLevelSignature(as, res, this.#options());
      return this.#tokens(tokens, claims ? { ...claims } : null);
    } catch (err) {
      throw classify(err);
    }
  }

  /**
   * The userinfo document. With `expectedSubject` (an OpenID provider), an OIDC userinfo
   * response whose `sub` must be that subject; without, a generic OAuth 2.0 provider's JSON
   * object, read afterwards by field paths (readProfile).
   */
  async userinfo(p: UpstreamProvider, accessToken: string, expectedSubject?: string): Promise<Record<string, unknown>> {
    if (!p.userinfoEndpoint) throw new UpstreamError('invalid_response', 'the provider has no userinfo endpoint');
    const as = this.#as(p);
    const client = this.#client(p);
    try {
      if (expectedSubject !== undefined) {
        const res = await oauth.userInfoRequest(as, client, accessToken, this.#options());
        return { ...(await oauth.processUserInfoResponse(as, client, expectedSubject, res)) };
      }
      const res = await oauth.protectedResourceRequest(
        accessToken,
        'GET',
        new URL(p.userinfoEndpoint),
        new Headers({ accept: 'application/json' }),
        null,
        this.#options(),
      );
      if (res.status !== 200) throw new UpstreamError('refused', `the userinfo endpoint answered ${res.status}`);
      const body: unknown = await res.json().catch(() => undefined);
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new UpstreamError('invalid_response', 'the userinfo answer is not a JSON object');
      return body as Record<string, unknown>;
    } catch (err) {
      throw classify(err);
    }
  }

  /**
   * Any JSON document of a protected resource of the provider, with the access token (a
   * provider's list of the person's addresses, such as GitHub's `/user/emails`).
   */
  async resource(accessToken: string, url: string): Promise<unknown> {
    try {
      const res = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(url), new Headers({ accept: 'application/json' }), null, this.#options());
      if (res.status !== 200) throw new UpstreamError('refused', `the resource answered ${res.status}`);
      const body: unknown = await res.json().catch(() => {
        throw new UpstreamError('invalid_response', 'the resource answer is not JSON');
      });
      return body;
    } catch (err) {
      throw classify(err);
    }
  }

  /** The refresh grant. A `refused` error with code `invalid_grant` means the user must connect again. */
  async refresh(p: UpstreamProvider, secret: string | null, refreshToken: string): Promise<UpstreamTokens> {
    const as = this.#as(p);
    const client = this.#client(p);
    try {
      const res = await oauth.refreshTokenGrantRequest(as, client, this.#auth(p, secret), refreshToken, this.#options());
      return this.#tokens(await oauth.processRefreshTokenResponse(as, client, res), null);
    } catch (err) {
      throw classify(err);
    }
  }

  /** RFC 7009 revocation of one token (the provider must have a revocation endpoint). */
  async revoke(p: UpstreamProvider, secret: string | null, token: string, hint: 'refresh_token' | 'access_token'): Promise<void> {
    const as = this.#as(p);
    try {
      const res = await oauth.revocationRequest(as, this.#client(p), this.#auth(p, secret), token, {
        ...this.#options(),
        additionalParameters: { token_type_hint: hint },
      });
      await oauth.processRevocationResponse(res);
    } catch (err) {
      throw classify(err);
    }
  }

  #tokens(t: oauth.TokenEndpointResponse, claims: Record<string, unknown> | null): UpstreamTokens {
    return {
      accessToken: t.access_token,
      refreshToken: typeof t.refresh_token === 'string' ? t.refresh_token : null,
      expiresIn: typeof t.expires_in === 'number' && Number.isFinite(t.expires_in) ? t.expires_in : null,
      scopes: typeof t.scope === 'string' ? t.scope.split(' ').filter(Boolean) : null,
      idTokenClaims: claims,
      subject: typeof claims?.sub === 'string' ? claims.sub : null,
    };
  }
}
