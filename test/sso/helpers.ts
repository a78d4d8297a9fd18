import type { TxtResolver } from '../../src/egress/dns.js';
import type { EgressResolver } from '../../src/egress/policy.js';
import type { Clock } from '../../src/kernel/clock.js';
import type { CreatedTenant } from '../../src/tenants/service.js';
import type { HttpResponse } from '../helpers/http.js';
import { type Browser, PASSWORD, REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from '../signin/helpers.js';
import { type Api, v1 } from '../helpers/v1.js';

/** `localhost` and `*.localhost` are 127.0.0.1 (the upstream tenants live on the same server). */
export const localResolver: EgressResolver = async (host) => (host === 'localhost' || host.endsWith('.localhost') ? [{ address: '127.0.0.1', family: 4 }] : []);

export interface SsoTestServer extends SigninTestServer {
  api: Api;
  /** A second tenant on the same server, `http://localhost:<port>`: the upstream OpenID Provider. */
  idp: CreatedTenant;
  idpIssuer: string;
  /** A /v1 client on the upstream tenant. */
  idpApi: Api;
}

/** The test server with loopback allowed by the egress policy and an upstream tenant on `localhost`. */
export async function startSsoServer(
  config: Record<string, unknown> = {},
  opts: { txtResolver?: TxtResolver; clock?: Clock; logStream?: NodeJS.WritableStream } = {},
): Promise<SsoTestServer> {
  const s = await startSigninServer({ egressResolver: localResolver, ...opts, config: { egressAllow: '127.0.0.1/32', ...config } } as Parameters<
    typeof startSigninServer
  >[0]);
  const idp = await s.createTenant(`localhost:${s.port}`);
  return Object.assign(s, {
    api: v1(s, s.tenant.platformApiKey),
    idp,
    idpIssuer: idp.tenant.issuer,
    idpApi: v1(s, idp.platformApiKey, idp.tenant.host),
  });
}

/** An upstream user whose email the upstream tenant asserts as verified (`email_verified: true`). */
export async function upstreamUser(s: SsoTestServer, email: string, opts: { verified?: boolean; name?: string } = {}): Promise<string> {
  const r = await s.idpApi('POST', '/users', { email, password: PASSWORD, name: opts.name ?? 'Grace Hopper' });
  if (r.status !== 201) throw new Error(`upstream user: ${r.status} ${r.text}`);
  if (opts.verified ?? true) await s.server.ctx.db.kysely.updateTable('users').set({ email_verified: 1 }).where('id', '=', r.json().id).execute();
  return r.json().id;
}

/**
 * An OIDC connection of `org` to the upstream tenant: created (the issuer discovered), then the
 * upstream client registered with the connection's redirect_uri, then its id and secret set.
 */
export async function oidcConnection(s: SsoTestServer, org: string, extra: Record<string, unknown> = {}): Promise<{ id: string; redirectUri: string }> {
  const created = await s.api('POST', `/organizations/${org}/sso/connections`, {
    protocol: 'oidc',
    name: 'Upstream',
    ...extra,
    oidc: { issuer: s.idpIssuer, client_id: 'pending' },
  });
  if (created.status !== 201) throw new Error(`connection: ${created.status} ${created.text}`);
  const { id, oidc } = created.json();
  const client = await s.server.ctx.management.clients.create(s.idp.tenant.id, {
    grant_types: ['authorization_code'],
    redirect_uris: [oidc.redirect_uri],
    client_name: 'Keyhall SP',
  });
  const patched = await s.api('PATCH', `/organizations/${org}/sso/connections/${id}`, {
    oidc: { client_id: client.client_id, client_secret: client.client_secret },
  });
  if (patched.status !== 200) throw new Error(`connection patch: ${patched.status} ${patched.text}`);
  return { id, redirectUri: oidc.redirect_uri };
}

/** /authorize at the SP for a public PKCE client: returns the login-page location (with the flow). */
export async function authorizeAtSp(s: SsoTestServer, b: Browser, clientId: string, extra: Record<string, string> = {}): Promise<string> {
  const params = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid email profile',
    state: 'app-state',
    code_challenge: await S256(VERIFIER),
    code_challenge_method: 'S256',
    ...extra,
  });
  const r = await b.get(`/authorize?${params}`);
  if (r.status !== 303) throw new Error(`authorize: ${r.status} ${r.text.slice(0, 300)}`);
  return r.headers.location!;
}

/**
 * The upstream part in the browser: follows the SP's 303 to the upstream /authorize, signs in on
 * the upstream login page and returns the upstream's redirect back to the SP's callback (a URL).
 */
export async function signInUpstream(s: SsoTestServer, toIdp: HttpResponse, email: string): Promise<URL> {
  if (toIdp.status !== 303) throw new Error(`expected a redirect to the IdP, got ${toIdp.status} ${toIdp.text.slice(0, 300)}`);
  const upstream = new URL(toIdp.headers.location!);
  if (upstream.origin !== s.idpIssuer) throw new Error(`not the IdP: ${upstream.href}`);
  const ub = s.browser(s.idp.tenant.host);
  const toLogin = await ub.get(upstream.pathname + upstream.search);
  if (toLogin.status !== 303) throw new Error(`upstream authorize: ${toLogin.status} ${toLogin.text.slice(0, 300)}`);
  const back = await signIn(ub, toLogin.headers.location!, email);
  if (back.status !== 303) throw new Error(`upstream login: ${back.status} ${back.text.slice(0, 300)}`);
  return new URL(back.headers.location!);
}
