import type { EgressResolver } from '../../src/egress/policy.js';
import type { Clock } from '../../src/kernel/clock.js';
import type { CreatedTenant } from '../../src/tenants/service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';
import { Browser, location, PASSWORD, signIn } from '../signin/helpers.js';

/** `localhost` (the upstream tenant's host) resolves to loopback only, which the policy allows. */
export const loopbackResolver: EgressResolver = async (host) => {
  if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw new Error('ENOTFOUND');
};

export const VAULT_CONFIG = { egressAllow: '127.0.0.1/32' };

/**
 * The vault's test bed on one server: the main tenant (127.0.0.1:port) runs the vault; a second
 * tenant on the same server (localhost:port) is the real upstream OAuth provider, with a
 * confidential client whose redirect URI is the provider's callback at the main tenant.
 */
export interface VaultBed {
  s: TestServer;
  api: Api;
  upstream: CreatedTenant;
  upstreamHost: string;
  providerId: string;
  orgId: string;
  upstreamClient: { client_id: string; client_secret: string };
  /** A user of the main tenant, member of orgId, and their account at the upstream. */
  createUserPair(name: string): Promise<{ email: string; userId: string; upstreamEmail: string }>;
  /**
   * Signs in (if needed), starts connecting on /connect/{providerId} and signs in upstream; returns
   * the browser and the path + query of the callback the upstream redirected to (not yet visited).
   */
  startFlow(email: string, upstreamEmail: string, b?: Browser): Promise<{ b: Browser; callback: string; authorize: URL }>;
  /** Connects through the hosted screens and returns the account id. */
  connect(email: string, upstreamEmail: string, b?: Browser): Promise<string>;
  /** Upstream refresh tokens minted so far (each rotation mints one). */
  upstreamRefreshCount(): Promise<number>;
}

export async function startVaultBed(
  opts: { clock?: Clock; providerExtra?: Record<string, unknown>; logStream?: NodeJS.WritableStream; config?: Record<string, unknown> } = {},
): Promise<VaultBed> {
  const s = await startTestServer({
    clock: opts.clock,
    egressResolver: loopbackResolver,
    logStream: opts.logStream,
    config: { ...VAULT_CONFIG, ...opts.config },
  });
  return vaultBedOn(s, opts.providerExtra);
}

export async function vaultBedOn(s: TestServer, providerExtra: Record<string, unknown> = {}): Promise<VaultBed> {
  const ctx = s.server.ctx;
  const api = v1(s, s.tenant.platformApiKey);
  const upstreamHost = `localhost:${s.port}`;
  const upstream = await s.createTenant(upstreamHost);
  // The provider first (its id names the callback), then the upstream client, then its credentials.
  const provider = await api('POST', '/connect/providers', {
    name: 'Upstream Keyhall',
    type: 'oidc',
    issuer: upstream.tenant.issuer,
    client_id: 'pending',
    client_secret: 'pending',
    scopes: ['openid', 'offline_access'],
    ...providerExtra,
  });
  if (provider.status !== 201) throw new Error(`provider: ${provider.status} ${provider.text}`);
  const providerId = provider.json().provider_id as string;
  const c = await ctx.management.clients.create(upstream.tenant.id, {
    client_name: 'Keyhall vault',
    grant_types: ['authorization_code', 'refresh_token'],
    redirect_uris: [provider.json().redirect_uri],
  });
  const upstreamClient = { client_id: c.client_id, client_secret: c.client_secret! };
  const patched = await api('PATCH', `/connect/providers/${providerId}`, { client_id: upstreamClient.client_id, client_secret: upstreamClient.client_secret });
  if (patched.status !== 200) throw new Error(`provider patch: ${patched.status} ${patched.text}`);
  const orgId = (await api('POST', '/organizations', { name: 'Acme' })).json().id as string;
  const users = ctx.management.users;
  const system = { type: 'system' as const, id: null };

  const bed: VaultBed = {
    s,
    api,
    upstream,
    upstreamHost,
    providerId,
    orgId,
    upstreamClient,
    createUserPair: async (name) => {
      const email = `${name}@acme.example`;
      const user = await users.create(s.tenant.tenant.id, system, { email, password: PASSWORD, name });
      const m = await api('POST', `/organizations/${orgId}/members`, { user_id: user.id });
      if (m.status !== 201) throw new Error(`member: ${m.status} ${m.text}`);
      const upstreamEmail = `${name}@upstream.example`;
      await users.create(upstream.tenant.id, system, { email: upstreamEmail, password: PASSWORD, name });
      return { email, userId: user.id, upstreamEmail };
    },
    startFlow: async (email, upstreamEmail, given) => {
      const b = given ?? new Browser(s.port, s.tenant.tenant.host);
      let r = await b.get(`/connect/${providerId}`);
      if (r.status === 303) {
        r = await signIn(b, location(r), email);
        r = await b.get(location(r));
      }
      if (r.status !== 200) throw new Error(`start page: ${r.status} ${r.text.slice(0, 300)}`);
      r = await b.submit(r, { organization_id: orgId });
      const authorize = new URL(location(r));
      const up = new Browser(s.port, upstreamHost);
      r = await up.get(authorize.pathname + authorize.search);
      r = await signIn(up, location(r), upstreamEmail);
      const cb = new URL(location(r));
      return { b, callback: cb.pathname + cb.search, authorize };
    },
    connect: async (email, upstreamEmail, given) => {
      const { b, callback } = await bed.startFlow(email, upstreamEmail, given);
      const r = await b.get(callback);
      if (r.status !== 303) throw new Error(`callback: ${r.status} ${/id="error"[^>]*>([^<]*)/.exec(r.text)?.[1] ?? r.text.slice(0, 300)}`);
      const done = location(r);
      const m = /^\/connect\?connected=(acct_[0-9a-z]{26})$/.exec(done);
      if (!m) throw new Error(`callback: ${r.status} ${done}`);
      return m[1]!;
    },
    upstreamRefreshCount: async () => {
      const r = await ctx.db.kysely
        .selectFrom('oauth_refresh_tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('tenant_id', '=', upstream.tenant.id)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
  return bed;
}
