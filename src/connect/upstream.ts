/**
 * The OAuth 2.0 client Keyhall speaks to upstream providers with: oauth4webapi for the protocol
 * (discovery, the authorization response with its RFC 9207 `iss` check, the code and refresh
 * grants, RFC 7009 revocation), every request sent through the egress agent. Each URL is checked
 * against the egress policy before the request and each address as the agent connects; answers
 * are read up to a size limit and within a time limit.
 */
import * as oauth from 'oauth4webapi';
import { EgressFetchError } from '../egress/fetch.js';
import type { Clock } from '../kernel/clock.js';
import type { UpstreamAuthMethod } from '../storage/repos/connect.js';
import { type UpstreamHttp, upstreamFetch } from '../upstream/http.js';

/** What the client needs to know of a provider. */
export interface UpstreamProvider {
  issuer: string | null;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  clientId: string;
  tokenEndpointAuthMethod: UpstreamAuthMethod;
  issParameterSupported: boolean;
}

export interface UpstreamTokens {
  accessToken: string;
  refreshToken: string | null;
  /** Seconds, or null when the upstream gave no lifetime. */
  expiresIn: number | null;
  scopes: string[] | null;
  /** The ID token's `sub`, when the upstream sent one. */
  subject: string | null;
}

export interface DiscoveredProvider {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  issParameterSupported: boolean;
}

/**
 * Why an upstream exchange failed: `refused` (the upstream answered with an OAuth error, in
 * `code`), `unreachable` (no answer in time, refused by the egress policy, connection failure),
 * `invalid_response` (an answer that is not a valid OAuth response) or `invalid_callback` (an
 * authorization response that fails its checks: `iss`, duplicate or missing parameters).
 */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly kind: 'refused' | 'unreachable' | 'invalid_response' | 'invalid_callback',
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

function classify(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (err instanceof EgressFetchError) {
    return err.kind === 'too_large' ? new UpstreamError('invalid_response', err.message) : new UpstreamError('unreachable', `the upstream could not be reached: ${err.message}`);
  }
  if (err instanceof oauth.ResponseBodyError) return new UpstreamError('refused', `the upstream answered ${err.status} ${err.error}`, err.error);
  if (err instanceof oauth.AuthorizationResponseError) return new UpstreamError('refused', `the upstream returned ${err.error}`, err.error);
  if (err instanceof oauth.OperationProcessingError || err instanceof oauth.UnsupportedOperationError) {
    return new UpstreamError('invalid_response', `invalid upstream response: ${err.message}`);
  }
  return new UpstreamError('unreachable', `the upstream could not be reached: ${(err as Error)?.message ?? String(err)}`);
}

export class UpstreamClient {
  constructor(
    private readonly http: UpstreamHttp,
    private readonly clock: Clock,
  ) {}

  /** oauth4webapi's fetch: egress/fetch with the upstream limits. */
  readonly #fetch = (url: string, init: oauth.CustomFetchOptions<string, unknown>): Promise<Response> =>
    upstreamFetch(this.http, url, { method: init.method, headers: init.headers, body: init.body as string | URLSearchParams | undefined });

  /**
   * Request options: our fetch; `http:` is left to the egress policy (it allows it only to
   * allowlisted addresses).
   */
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
      authorization_response_iss_parameter_supported: p.issParameterSupported,
    };
  }

  #client(p: UpstreamProvider): oauth.Client {
    // ID-token times are judged by Keyhall's clock (the injected one in tests).
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
      return {
        issuer: as.issuer,
        authorizationEndpoint: as.authorization_endpoint,
        tokenEndpoint: as.token_endpoint,
        revocationEndpoint: typeof as.revocation_endpoint === 'string' ? as.revocation_endpoint : null,
        issParameterSupported: as.authorization_response_iss_parameter_supported === true,
      };
    } catch (err) {
      throw classify(err);
    }
  }

  /** The authorization request URL (state and, with PKCE, an S256 challenge). */
  async authorizationUrl(
    p: UpstreamProvider & { pkce: boolean; authorizeParams: Record<string, string> },
    o: { redirectUri: string; state: string; verifier: string; scopes: string[] },
  ): Promise<string> {
    const url = new URL(p.authorizationEndpoint);
    for (const [k, v] of Object.entries(p.authorizeParams)) url.searchParams.set(k, v);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', p.clientId);
    url.searchParams.set('redirect_uri', o.redirectUri);
    if (o.scopes.length > 0) url.searchParams.set('scope', o.scopes.join(' '));
    url.searchParams.set('state', o.state);
    if (p.pkce) {
      url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(o.verifier));
      url.searchParams.set('code_challenge_method', 'S256');
    }
    return url.href;
  }

  /**
   * The callback: validates the authorization response (state, `error`, and `iss` per RFC 9207
   * when the issuer is known), then redeems the code.
   */
  async exchangeCode(
    p: UpstreamProvider & { pkce: boolean },
    secret: string | null,
    params: URLSearchParams,
    o: { redirectUri: string; state: string; verifier: string },
  ): Promise<UpstreamTokens> {
    const as = this.#as(p);
    const client = this.#client(p);
    const response = new URLSearchParams(params);
    if (p.issuer === null) response.delete('iss');
    let validated: URLSearchParams;
    try {
      validated = oauth.validateAuthResponse(as, client, response, o.state);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) throw classify(err);
      throw new UpstreamError('invalid_callback', (err as Error).message);
    }
    try {
      const res = await oauth.authorizationCodeGrantRequest(as, client, this.#auth(p, secret), validated, o.redirectUri, p.pkce ? o.verifier : oauth.nopkce, this.#options());
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
      return this.#tokens(tokens, oauth.getValidatedIdTokenClaims(tokens)?.sub ?? null);
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
      const res = await oauth.revocationRequest(as, this.#client(p), this.#auth(p, secret), token, { ...this.#options(), additionalParameters: { token_type_hint: hint } });
      await oauth.processRevocationResponse(res);
    } catch (err) {
      throw classify(err);
    }
  }

  #tokens(t: oauth.TokenEndpointResponse, subject: string | null): UpstreamTokens {
    return {
      accessToken: t.access_token,
      refreshToken: typeof t.refresh_token === 'string' ? t.refresh_token : null,
      expiresIn: typeof t.expires_in === 'number' && Number.isFinite(t.expires_in) ? t.expires_in : null,
      scopes: typeof t.scope === 'string' ? t.scope.split(' ').filter(Boolean) : null,
      subject,
    };
  }
}
