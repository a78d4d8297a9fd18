/** A cookie-keeping JSON client for the console API (what the console's own fetches send). */
import { request, type HttpResponse } from '../helpers/http.js';
import { Browser, PASSWORD } from '../signin/helpers.js';
import type { TestServer } from '../helpers/server.js';

export { PASSWORD };

export class ConsoleClient {
  readonly browser: Browser;
  readonly origin: string;
  csrf = '';
  /** On the test tenant, or on `tenant` (its issuer's origin is the one the console expects). */
  constructor(
    readonly server: TestServer,
    tenant: { host: string; issuer: string } = server.tenant.tenant,
  ) {
    this.browser = new Browser(server.port, tenant.host);
    this.origin = new URL(tenant.issuer).origin;
  }

  /** A console API call (a string body is sent as it is); Origin and the CSRF header unless `headers` says otherwise. */
  async call(method: string, path: string, body?: unknown, headers: Record<string, string | undefined> = {}): Promise<HttpResponse> {
    const base: Record<string, string | undefined> = { origin: this.origin, 'x-csrf-token': this.csrf, 'sec-fetch-site': 'same-origin' };
    if (body !== undefined) base['content-type'] = 'application/json';
    if (this.browser.cookies.size) base.cookie = [...this.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const all = Object.fromEntries(Object.entries({ ...base, ...headers }).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
    const raw = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const r = await request(this.server.port, { host: this.browser.host, method, path, headers: all, body: raw });
    for (const c of r.headers['set-cookie'] ?? []) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      this.browser.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    return r;
  }

  /** Signs in on the hosted /login (the same session cookie as every hosted page). */
  async signIn(email: string, password = PASSWORD): Promise<void> {
    const page = await this.browser.get('/login?return_to=%2Fconsole%2F');
    const r = await this.browser.submit(page, { email, password });
    if (r.status !== 303 || r.headers.location !== '/console/') throw new Error(`login: ${r.status} ${r.text.slice(0, 200)}`);
    // The redirect's page load mints the console's SameSite=Strict cookie (docs/console.md).
    await this.call('GET', '/console/', undefined, { origin: undefined, 'x-csrf-token': undefined, 'sec-fetch-site': 'same-origin' });
    const s = await this.call('GET', '/console/api/session');
    if (s.status === 200) this.csrf = s.json().csrf_token;
  }
}

/** The token of a printed setup link. */
export const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;
