import { SigninStoreRepo } from '../../src/storage/repos/signin-store.js';
import { request, type HttpResponse } from '../helpers/http.js';
import type { Clock } from '../../src/kernel/clock.js';
import { DEFAULT_CLIENT_SETTINGS, type SigninClientSettings } from '../../src/oauth/authorize/types.js';
import { startOAuthServer, type OAuthTestServer } from '../oauth/helpers.js';
import type { Config } from '../../src/config/index.js';

export const PASSWORD = 'correct horse battery staple';

export interface SigninTestServer extends OAuthTestServer {
  createUser(email: string, password?: string, name?: string): Promise<{ id: string; email: string }>;
  clientSettings(clientId: string, s: Partial<SigninClientSettings>): Promise<void>;
  /** A public PKCE client for the code flow. */
  publicClient(extra?: Record<string, unknown>): Promise<{ client_id: string }>;
  /** A confidential client_secret_basic client for the code flow. */
  webClient(extra?: Record<string, unknown>): Promise<{ client_id: string; client_secret: string }>;
  browser(host?: string): Browser;
}

export const REDIRECT = 'https://app.example/cb';

export async function startSigninServer(
  opts: { clock?: Clock; config?: Partial<Record<keyof Config, unknown>>; localhost?: boolean; onStatement?: (sql: string) => void } = {},
): Promise<SigninTestServer> {
  const s = await startOAuthServer(opts);
  const ctx = s.server.ctx;
  const users = ctx.management.users;
  return Object.assign(s, {
    createUser: async (email: string, password = PASSWORD, name = 'Ada Lovelace') => {
      const u = await users.create(s.tenant.tenant.id, { type: 'system', id: null }, { email, password, name });
      return { id: u.id, email: u.email };
    },
    clientSettings: (clientId: string, settings: Partial<SigninClientSettings>) =>
      new SigninStoreRepo(ctx.db.kysely).saveClientSettings(s.tenant.tenant.id, clientId, { ...DEFAULT_CLIENT_SETTINGS, ...settings }, ctx.clock.now()),
    publicClient: (extra: Record<string, unknown> = {}) =>
      s.createClient({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT], ...extra }),
    webClient: async (extra: Record<string, unknown> = {}) => {
      const c = await s.createClient({ grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT], ...extra });
      return { client_id: c.client_id, client_secret: c.client_secret! };
    },
    browser: (host?: string) => new Browser(s.port, host ?? s.tenant.tenant.host),
  });
}

/** A cookie-keeping HTTP client that behaves like a browser on one host (no automatic redirects). */
export class Browser {
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie header seen, raw. */
  readonly setCookies: string[] = [];
  constructor(
    readonly port: number,
    readonly host: string,
  ) {}

  #cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  #remember(r: HttpResponse): HttpResponse {
    const set = r.headers['set-cookie'] ?? [];
    for (const c of set) {
      this.setCookies.push(c);
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return r;
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
    return this.#remember(await request(this.port, { host: this.host, path, headers: { ...this.#cookieHeader(), ...headers } }));
  }

  async post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<HttpResponse> {
    return this.#remember(
      await request(this.port, {
        host: this.host,
        method: 'POST',
        path,
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: `http://${this.host}`, ...this.#cookieHeader(), ...headers },
        body: new URLSearchParams(form).toString(),
      }),
    );
  }

  /** Submits the first form of a page with its hidden fields plus `fields`. */
  async submit(page: HttpResponse, fields: Record<string, string> = {}, formIndex = 0): Promise<HttpResponse> {
    const forms = [...page.text.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)];
    const form = forms[formIndex];
    if (!form) throw new Error(`no form ${formIndex} on page: ${page.status} ${page.text.slice(0, 300)}`);
    const hidden: Record<string, string> = {};
    for (const m of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) hidden[m[1]!] = decodeEntities(m[2]!);
    return this.post(decodeEntities(form[1]!), { ...hidden, ...fields });
  }
}

export function decodeEntities(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#96;/g, '`')
    .replace(/&amp;/g, '&');
}

/** The path (with query) of a same-host Location, or the full URL of another host's. */
export function location(r: HttpResponse): string {
  const loc = r.headers.location;
  if (typeof loc !== 'string') throw new Error(`expected a redirect, got ${r.status} ${r.text.slice(0, 300)}`);
  return loc;
}

/** Query parameters of a redirect to the client. */
export function callbackParams(r: HttpResponse): URLSearchParams {
  return new URL(location(r)).searchParams;
}

/** Signs in through the login page a flow redirected to and returns the response to the login POST. */
export async function signIn(b: Browser, loginLocation: string, email: string, password = PASSWORD): Promise<HttpResponse> {
  const page = await b.get(loginLocation);
  if (page.status !== 200) throw new Error(`login page: ${page.status} ${page.text.slice(0, 300)}`);
  return b.submit(page, { email, password });
}

export const S256 = async (verifier: string) => {
  const { createHash } = await import('node:crypto');
  return createHash('sha256').update(verifier).digest('base64url');
};
export const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
