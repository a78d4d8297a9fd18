/**
 * One server under test, in its own process (`tsx bench/target.ts <kind>`), so that the parent can
 * read this process's CPU time alone. Kinds: `baseline` (bare Fastify routes: the ceiling),
 * `peer` (node-oidc-provider), `keyhall-sqlite`, `keyhall-postgres` (KEYHALL_DATABASE_URL set by
 * the parent to a fresh database), `tenants` (Keyhall on SQLite, one tenant, then N).
 *
 * Protocol (IPC): the child sends `{ ready, port, fixtures }` once set up, then answers
 * `{ id, op: 'cpu' | 'rss' | 'tenants' | 'stop' }` with `{ id, value }`.
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import os from 'node:os';
import path from 'node:path';
import type { RunningServer } from '../src/server.js';
import { startBaseline } from './baseline.js';
import { compiled } from './compiled.js';
import { type Fixtures, PASSWORD, REDIRECT } from './fixtures.js';
import { startPeer } from './peer.js';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

const { loadConfig } = await compiled<typeof import('../src/config/index.js')>('config/index.js');
const { startRefreshFamily } = await compiled<typeof import('../src/oauth/token/refresh.js')>('oauth/token/refresh.js');
const { startServer } = await compiled<typeof import('../src/server.js')>('server.js');

async function keyhall(kind: string, refreshCount: number): Promise<{ port: number; fixtures: Fixtures; server: RunningServer; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-bench-'));
  const env: Record<string, string> = { ...(process.env as Record<string, string>), KEYHALL_DATA_DIR: dataDir };
  const server = await startServer(loadConfig(env, { port: 0, host: '127.0.0.1', bootstrap: 'false' }));
  const host = `127.0.0.1:${server.port}`;
  const { tenant } = await server.ctx.tenants.create({ host });
  const client = await server.ctx.management.clients.create(tenant.id, { grant_types: ['client_credentials'], scope: 'read' });
  const authorization = basic(client.client_id, client.client_secret!);
  const fixtures: Fixtures = { host, authorization };
  if (kind !== 'tenants') {
    const email = 'bench@example.com';
    const user = await server.ctx.management.users.create(tenant.id, { type: 'system', id: null }, { email, password: PASSWORD, name: 'Bench User' });
    const web = await server.ctx.management.clients.create(tenant.id, {
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT],
      scope: 'openid profile email',
    });
    fixtures.web = { clientId: web.client_id, authorization: basic(web.client_id, web.client_secret!), email };
    const ports = server.ctx.oauth.ports;
    const now = server.ctx.clock.now();
    const grant = { clientId: web.client_id, sub: user.id, scopes: ['openid', 'profile', 'email'], resources: [], jkt: null };
    fixtures.refreshTokens = [];
    for (let i = 0; i < refreshCount; i++) fixtures.refreshTokens.push(await startRefreshFamily(tenant, grant, ports, now));
    const userTokens = await post(
      server.port,
      host,
      '/token',
      fixtures.web.authorization,
      `grant_type=refresh_token&refresh_token=${await startRefreshFamily(tenant, grant, ports, now)}`,
    );
    fixtures.userinfoToken = userTokens.access_token as string;
    fixtures.introspectToken = (await post(server.port, host, '/token', authorization, 'grant_type=client_credentials')).access_token as string;
  }
  return { port: server.port, fixtures, server, dataDir };
}

async function post(port: number, host: string, p: string, authorization: string, body: string): Promise<Record<string, unknown>> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: p,
        setHost: false,
        headers: { host, authorization, 'content-type': 'application/x-www-form-urlencoded' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(JSON.parse(text) as Record<string, unknown>) : reject(new Error(`${p}: ${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Adds tenants (each with its EdDSA key, a platform key and one client_credentials client; the RS256
 * key is made at first use, which /token never is) until there are `count`.
 */
async function growTenants(server: RunningServer, fixtures: Fixtures, count: number): Promise<void> {
  fixtures.tenants ??= [{ host: fixtures.host, authorization: fixtures.authorization }];
  const batch = 16;
  while (fixtures.tenants.length < count) {
    const n = Math.min(batch, count - fixtures.tenants.length);
    const start = fixtures.tenants.length;
    const made = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const host = `t${start + i}.bench.localhost:${server.port}`;
        const { tenant } = await server.ctx.tenants.create({ host, issuer: `http://${host}` });
        const c = await server.ctx.management.clients.create(tenant.id, { grant_types: ['client_credentials'], scope: 'read' });
        return { host, authorization: basic(c.client_id, c.client_secret!) };
      }),
    );
    fixtures.tenants.push(...made);
  }
}

/** CPU time of the main (JavaScript) thread alone, from /proc (Linux): the event loop's own cost, without the thread pool's. */
function mainThreadCpuMicros(): number {
  const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

async function main(): Promise<void> {
  const kind = process.argv[2] ?? 'baseline';
  const refreshCount = Number(process.env.BENCH_REFRESH_CHAINS ?? 64);
  let port: number;
  let fixtures: Fixtures;
  let stop: () => Promise<void>;
  let server: RunningServer | undefined;
  if (kind === 'baseline') {
    const base = await startBaseline();
    port = base.port;
    fixtures = { host: `127.0.0.1:${port}`, authorization: base.authorization, introspectToken: base.sampleToken };
    stop = () => base.app.close();
  } else if (kind === 'peer') {
    const peer = await startPeer();
    port = peer.port;
    fixtures = {
      host: `127.0.0.1:${port}`,
      authorization: basic(peer.clientId, peer.clientSecret),
      web: { clientId: peer.web.clientId, authorization: basic(peer.web.clientId, peer.web.clientSecret), email: peer.web.email },
      resource: peer.resource,
      opaqueResource: peer.opaqueResource,
    };
    stop = peer.close;
  } else {
    const k = await keyhall(kind, refreshCount);
    ({ port, fixtures, server } = k);
    stop = async () => {
      await k.server.close();
      fs.rmSync(k.dataDir, { recursive: true, force: true });
    };
  }
  // A CPU profile of exactly one measured run (BENCH_PROFILE): startup and warm-up excluded.
  const profiler = new inspector.Session();
  profiler.connect();
  process.on('message', (m: { id: number; op: string; count?: number; file?: string }) => {
    const answer = (value: unknown) => process.send!({ id: m.id, value });
    if (m.op === 'cpu') {
      const u = process.cpuUsage();
      answer(u.user + u.system);
    } else if (m.op === 'cpu-main') {
      answer(mainThreadCpuMicros());
    } else if (m.op === 'rss') {
      (globalThis as { gc?: () => void }).gc?.();
      answer(process.memoryUsage().rss);
    } else if (m.op === 'tenants' && server) {
      growTenants(server, fixtures, m.count ?? 1).then(
        () => answer(fixtures.tenants),
        (err: Error) => answer({ error: err.message }),
      );
    } else if (m.op === 'profile-start') {
      profiler.post('Profiler.enable', () => profiler.post('Profiler.start', () => answer(true)));
    } else if (m.op === 'profile-stop') {
      profiler.post('Profiler.stop', (err, result) => {
        if (!err) {
          fs.mkdirSync(path.dirname(m.file!), { recursive: true });
          fs.writeFileSync(m.file!, JSON.stringify(result.profile));
        }
        answer(err ? { error: err.message } : m.file);
      });
    } else if (m.op === 'stop') {
      stop().then(() => {
        answer(true);
        process.disconnect();
      });
    }
  });
  process.send!({ ready: true, port, fixtures });
}

await main();
