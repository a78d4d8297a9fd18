/**
 * `npm run test:chaos`: three Keyhall instances on one PostgreSQL (a throwaway cluster this
 * script starts itself), a load loop of logins + code flows, refresh rotations,
 * client_credentials, API-key calls and webhook-producing changes, instances SIGKILLed at random
 * and restarted, PostgreSQL restarted once, a key rotation. Then every invariant is checked and
 * printed with its count; any violation exits 1. docs/deploy.md describes it.
 *
 * CHAOS_SECONDS sets the least length of the load phase (default 45).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type HttpResponse, request } from '../helpers/http.js';
import { Browser, S256 } from '../signin/helpers.js';

const root = path.resolve(import.meta.dirname, '../..');
const LOAD_MS = Number(process.env.CHAOS_SECONDS ?? 45) * 1000;
const HOST = 'localhost:4000';
const REDIRECT = 'https://app.example/cb';
const VERIFIER = 'chaos-verifier-'.padEnd(50, 'x');
const PASSWORD = 'correct horse battery staple';
const CACHE_TTL_MS = 1000;
const WEBHOOK_TIMEOUT_MS = 5000;
/** Requests that end within this long of a kill or restart count as in its window. */
const WINDOW_SLACK_MS = 3000;

const log = (msg: string) => process.stdout.write(`[chaos ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

// ---------------------------------------------------------------- PostgreSQL of our own
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

class Cluster {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-chaos-pg-'));
  readonly bin: string;
  constructor(readonly port: number) {
    const versions = fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b)) : [];
    const v = versions.at(-1);
    if (!v) throw new Error('PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are needed: apt-get install postgresql');
    this.bin = `/usr/lib/postgresql/${v}/bin`;
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres', this.dir]);
  }
  #run(cmd: string, args: string[]): void {
    const full = path.join(this.bin, cmd);
    const asRoot = process.getuid?.() === 0;
    const r = asRoot ? spawnSync('runuser', ['-u', 'postgres', '--', full, ...args], { encoding: 'utf8' }) : spawnSync(full, args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  }
  init(): void {
    this.#run('initdb', ['-D', `${this.dir}/data`, '-U', 'postgres', '--auth=trust']);
  }
  start(): void {
    this.#run('pg_ctl', [
      '-D',
      `${this.dir}/data`,
      '-l',
      `${this.dir}/log`,
      '-w',
      '-o',
      `-c listen_addresses=127.0.0.1 -p ${this.port} -k ${this.dir} -c fsync=off -c max_connections=200`,
      'start',
    ]);
  }
  restart(): void {
    this.#run('pg_ctl', ['-D', `${this.dir}/data`, '-m', 'fast', '-w', 'stop']);
    this.start();
  }
  stop(): void {
    try {
      this.#run('pg_ctl', ['-D', `${this.dir}/data`, '-m', 'immediate', '-w', 'stop']);
    } finally {
      fs.rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

// ---------------------------------------------------------------- instances
interface Window {
  from: number;
  to: number;
}
const windows: Window[] = [];
const inWindow = (start: number, end: number) => windows.some((w) => start <= w.to + WINDOW_SLACK_MS && end >= w.from - WINDOW_SLACK_MS);

class Instance {
  child: ChildProcess | undefined;
  up = false;
  exits: (number | null)[] = [];
  /** Exits this script did not cause (a crash), with the end of the instance's stderr. */
  crashes: string[] = [];
  #killing = false;
  constructor(
    readonly name: string,
    readonly port: number,
    readonly env: Record<string, string>,
  ) {}
  async start(): Promise<void> {
    const child = spawn(process.execPath, [path.join(root, 'dist/main.js'), 'serve', '--port', String(this.port)], {
      cwd: root,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString('utf8')).slice(-2000);
    });
    child.on('exit', (code, signal) => {
      this.up = false;
      this.exits.push(code);
      if (!this.#killing) this.crashes.push(`${this.name} exited (${code ?? signal}): ${stderr.trim().split('\n').slice(-3).join(' / ')}`);
    });
    this.child = child;
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      const r = await request(this.port, { host: 'any', path: '/readyz' }).catch(() => undefined);
      if (r?.status === 200) {
        this.up = true;
        return;
      }
      await sleep(100);
    }
    throw new Error(`${this.name} did not become ready`);
  }
  kill(): Promise<void> {
    this.up = false;
    this.#killing = true;
    return new Promise<void>((resolve) => {
      if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    }).finally(() => {
      this.#killing = false;
    });
  }
}

// ---------------------------------------------------------------- webhook receiver
interface Receiver {
  url: string;
  /** event id → times delivered (2xx answered). */
  events: Map<string, number>;
  /**
   * Requests that arrived while another request with the same webhook-id was still open: not
   * yet answered and its connection not closed by the sender (a sender that gave up on a slow
   * answer closes it, so that attempt is over).
   */
  overlaps: number;
  requests: number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const open = new Map<string, number>();
  const r = { events: new Map<string, number>(), overlaps: 0, requests: 0 } as Receiver;
  const server = http.createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    if ((open.get(id) ?? 0) > 0) r.overlaps++;
    open.set(id, (open.get(id) ?? 0) + 1);
    // Answered, or the connection closed by the sender: this attempt is over.
    res.once('close', () => open.set(id, (open.get(id) ?? 1) - 1));
    r.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // A short think time widens the window in which a second attempt would overlap.
      setTimeout(() => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
        r.events.set(body.id, (r.events.get(body.id) ?? 0) + 1);
        res.writeHead(200).end('ok');
      }, 30);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

// ---------------------------------------------------------------- counters
const counts = {
  operations: 0,
  ok: 0,
  connectionErrors: 0,
  fiveXxInWindows: 0,
  fiveXxOutsideWindows: [] as string[],
  logins: 0,
  codeFlows: 0,
  codeDoubleRedemptions: 0,
  codeDoubleRedemptionSuccesses: 0,
  refreshRaces: 0,
  refreshDoubleSuccessors: 0,
  clientCredentials: 0,
  apiKeyCalls: 0,
  membersAdded: [] as string[],
  kills: 0,
  restarts: 0,
  postgresRestarts: 0,
};

const flowFailures = new Map<string, number>();
function flowFailed(reason: string): void {
  flowFailures.set(reason, (flowFailures.get(reason) ?? 0) + 1);
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

async function main(): Promise<void> {
  const started = Date.now();
  execFileSync(process.execPath, [path.join(root, 'scripts/build-if-stale.mjs')], { cwd: root, stdio: 'inherit' });
  const cluster = new Cluster(await freePort());
  cluster.init();
  cluster.start();
  log(`PostgreSQL ${path.basename(path.dirname(cluster.bin))} on port ${cluster.port} (${cluster.dir})`);
  const receiver = await startReceiver();
  const instances: Instance[] = [];
  try {
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${cluster.port}/postgres` });
    await admin.connect();
    await admin.query('CREATE DATABASE keyhall');
    await admin.end();
    const env = {
      KEYHALL_DATABASE_URL: `postgres://postgres@127.0.0.1:${cluster.port}/keyhall`,
      KEYHALL_MASTER_KEY: randomBytes(32).toString('base64'),
      KEYHALL_LOG_LEVEL: 'silent',
      KEYHALL_BOOTSTRAP: 'false',
      KEYHALL_EGRESS_ALLOW: '127.0.0.1/32',
      KEYHALL_DISPATCH_INTERVAL_MS: '200',
      KEYHALL_WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
      KEYHALL_WEBHOOK_RETRY_SCHEDULE: '0,1,1,2,2,5,5,10,10,10',
      KEYHALL_CACHE_TTL_MS: String(CACHE_TTL_MS),
      KEYHALL_SHUTDOWN_TIMEOUT_MS: '2000',
      KEYHALL_API_RATE_LIMIT: '1000000',
      KEYHALL_LOGIN_MAX_FAILURES_IP: '1000000',
    };
    const cli = (args: string[]) => {
      const r = spawnSync(process.execPath, [path.join(root, 'dist/main.js'), ...args], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`keyhall ${args.join(' ')}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    };
    const apiKey = (cli(['tenant', 'create', '--host', HOST, '--json']) as { platform_api_key: string }).platform_api_key;

    for (const name of ['a', 'b', 'c']) instances.push(new Instance(name, await freePort(), env));
    await Promise.all(instances.map((i) => i.start()));
    log(`instances ${instances.map((i) => `${i.name}:${i.port}`).join(' ')}`);
    const live = () => instances.filter((i) => i.up);

    /** One HTTP exchange with bookkeeping: 5xx outside every restart window is a violation. */
    const call = async (inst: Instance, opts: Parameters<typeof request>[1], what: string): Promise<HttpResponse | undefined> => {
      const t0 = Date.now();
      counts.operations++;
      try {
        const r = await request(inst.port, { host: HOST, ...opts });
        if (r.status >= 500) {
          if (inWindow(t0, Date.now())) counts.fiveXxInWindows++;
          else counts.fiveXxOutsideWindows.push(`${what} on ${inst.name}: ${r.status} ${r.text.slice(0, 120)}`);
        } else counts.ok++;
        return r;
      } catch {
        counts.connectionErrors++;
        return undefined;
      }
    };
    const form = (body: Record<string, string>) => ({ 'content-type': 'application/x-www-form-urlencoded', body: new URLSearchParams(body).toString() });
    const v1 = (inst: Instance, method: string, p: string, body?: unknown) =>
      call(
        inst,
        {
          method,
          path: `/v1${p}`,
          headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        },
        `${method} /v1${p}`,
      );
    const token = (inst: Instance, auth: string, body: Record<string, string>) => {
      const f = form(body);
      return call(
        inst,
        { method: 'POST', path: '/token', headers: { authorization: auth, 'content-type': f['content-type'] }, body: f.body },
        `/token ${body.grant_type}`,
      );
    };

    // Setup through the API (instance a).
    const a = instances[0]!;
    const org = (await v1(a, 'POST', '/organizations', { name: 'Chaos' }))!.json().id as string;
    const hook = await v1(a, 'POST', `/organizations/${org}/webhooks`, { url: receiver.url, events: ['member.added'] });
    if (hook?.status !== 201) throw new Error(`webhook: ${hook?.text}`);
    const web = (await v1(a, 'POST', '/clients', {
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      redirect_uris: [REDIRECT],
      scope: 'read',
    }))!.json() as { client_id: string; client_secret: string };
    if (!web.client_secret) throw new Error('no client');
    const webAuth = basic(web.client_id, web.client_secret);
    const user = await v1(a, 'POST', '/users', { email: 'chaos@example.com', password: PASSWORD });
    if (user?.status !== 201) throw new Error(`user: ${user?.text}`);
    const challenge = await S256(VERIFIER);
    let refreshToken: string | undefined;

    // ------------------------------------------------ operations
    const ops: Record<string, () => Promise<void>> = {
      async codeFlow() {
        const inst = pick(live());
        if (!inst) return;
        const b = new Browser(inst.port, HOST);
        const params = new URLSearchParams({
          client_id: web.client_id,
          redirect_uri: REDIRECT,
          response_type: 'code',
          scope: 'openid offline_access',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        });
        const browse = async (what: string, step: () => Promise<HttpResponse>) => {
          const t0 = Date.now();
          counts.operations++;
          const r = await step();
          if (r.status < 500) counts.ok++;
          else if (inWindow(t0, Date.now())) counts.fiveXxInWindows++;
          else counts.fiveXxOutsideWindows.push(`${what} on ${inst.name}: ${r.status} ${r.text.slice(0, 120)}`);
          return r;
        };
        try {
          const authz = await browse('/authorize', () => b.get(`/authorize?${params}`));
          if (authz.status !== 303) return flowFailed(`authorize ${authz.status} ${authz.text.slice(0, 200)}`);
          const page = await browse('GET /login', () => b.get(String(authz.headers.location)));
          if (page.status !== 200) return flowFailed(`login page ${page.status}`);
          const done = await browse('POST /login', () => b.submit(page, { email: 'chaos@example.com', password: PASSWORD }));
          if (done.status !== 303 || !String(done.headers.location).startsWith(REDIRECT))
            return flowFailed(`login ${done.status} ${String(done.headers.location)} ${done.text.slice(0, 200)}`);
          if (done.status !== 303 || !String(done.headers.location).startsWith(REDIRECT)) return;
          counts.logins++;
          const code = new URL(String(done.headers.location)).searchParams.get('code')!;
          const redeem = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER };
          const first = await token(pick(live()) ?? inst, webAuth, redeem);
          if (first?.status !== 200) return;
          counts.codeFlows++;
          refreshToken = first.json().refresh_token ?? refreshToken;
          // A replay on another instance must fail.
          const other = pick(live().filter((i) => i !== inst)) ?? inst;
          const second = await token(other, webAuth, redeem);
          if (second) {
            counts.codeDoubleRedemptions++;
            if (second.status === 200) counts.codeDoubleRedemptionSuccesses++;
          }
        } catch {
          counts.connectionErrors++;
        }
      },
      async refreshRace() {
        const rt = refreshToken;
        const [i1, i2] = [pick(live()), pick(live())];
        if (!rt || !i1 || !i2) return;
        refreshToken = undefined;
        // The same refresh token at two instances at once: at most one successor.
        const results = await Promise.all([
          token(i1, webAuth, { grant_type: 'refresh_token', refresh_token: rt }),
          token(i2, webAuth, { grant_type: 'refresh_token', refresh_token: rt }),
        ]);
        if (results.some((r) => r === undefined)) return;
        counts.refreshRaces++;
        const winners = results.filter((r) => r!.status === 200);
        if (winners.length > 1) counts.refreshDoubleSuccessors++;
      },
      async clientCredentials() {
        const inst = pick(live());
        if (!inst) return;
        const r = await token(inst, webAuth, { grant_type: 'client_credentials', scope: 'read' });
        if (r?.status === 200) counts.clientCredentials++;
      },
      async apiKeyCall() {
        const inst = pick(live());
        if (!inst) return;
        const r = await v1(inst, 'GET', '/organizations');
        if (r?.status === 200) counts.apiKeyCalls++;
      },
      async memberAdded() {
        const inst = pick(live());
        if (!inst) return;
        const u = await v1(inst, 'POST', '/users', { email: `m${randomBytes(6).toString('hex')}@example.com` });
        if (u?.status !== 201) return;
        const m = await v1(pick(live()) ?? inst, 'POST', `/organizations/${org}/members`, { user_id: u.json().id });
        if (m?.status === 201) counts.membersAdded.push(u.json().id as string);
      },
    };
    const weighted = ['codeFlow', 'refreshRace', 'refreshRace', 'clientCredentials', 'clientCredentials', 'apiKeyCall', 'memberAdded', 'memberAdded'];

    let stop = false;
    const workers = Array.from({ length: 6 }, async () => {
      while (!stop) {
        await ops[pick(weighted)]!();
        if (live().length === 0) await sleep(100);
      }
    });

    // ------------------------------------------------ chaos
    const loadStart = Date.now();
    const loadEnd = loadStart + LOAD_MS;
    let rotation: { seenWithinMs: number[] } | undefined;
    // The plan: these in order, then more kills until the load phase is over.
    const plan = ['kill', 'rotate', 'kill', 'postgres', 'kill'];
    while (plan.length || Date.now() < loadEnd) {
      await sleep(2000 + Math.random() * 3000);
      const step = plan.shift() ?? 'kill';
      for (const inst of instances) if (!inst.up && inst.crashes.length) await inst.start();
      if (step === 'postgres') {
        const w = { from: Date.now(), to: Infinity };
        windows.push(w);
        cluster.restart();
        counts.postgresRestarts++;
        // Over when every live instance answers /readyz again.
        const until = Date.now() + 60_000;
        for (const inst of live()) {
          while (inst.up && Date.now() < until && (await request(inst.port, { host: 'any', path: '/readyz' }).catch(() => undefined))?.status !== 200)
            await sleep(100);
        }
        w.to = Date.now();
        log(`PostgreSQL restarted (${w.to - w.from} ms until every instance was ready again)`);
      } else if (step === 'rotate') {
        // Key rotation through the CLI (another process): every instance must publish it within the cache TTL.
        const before = new Set(((await request(a.port, { host: HOST, path: '/.well-known/jwks.json' })).json().keys as { kid: string }[]).map((k) => k.kid));
        cli(['keys', 'rotate', '--tenant', HOST, '--json']);
        // Measured from the CLI's exit (its transaction committed just before).
        const rotatedAt = Date.now();
        const seen = await Promise.all(
          instances.map(async (inst) => {
            while (Date.now() - rotatedAt < 30_000) {
              const r = await request(inst.port, { host: HOST, path: '/.well-known/jwks.json' }).catch(() => undefined);
              if (r?.status === 200 && (r.json().keys as { kid: string }[]).some((k) => !before.has(k.kid))) return Date.now() - rotatedAt;
              await sleep(50);
            }
            return Infinity;
          }),
        );
        rotation = { seenWithinMs: seen };
        log(`key rotation seen by the instances after ${seen.join(', ')} ms`);
      } else {
        const victim = pick(live());
        if (!victim) continue;
        const w = { from: Date.now(), to: Infinity };
        windows.push(w);
        await victim.kill();
        counts.kills++;
        await sleep(500 + Math.random() * 1500);
        await victim.start();
        counts.restarts++;
        w.to = Date.now();
        log(`SIGKILLed ${victim.name}, restarted in ${w.to - w.from} ms`);
      }
    }
    stop = true;
    await Promise.all(workers);
    for (const inst of instances) if (!inst.up) await inst.start();
    log(`load over after ${Math.round((Date.now() - started) / 1000)} s; waiting for the webhook backlog to drain`);

    // ------------------------------------------------ invariants
    const db = new pg.Client({ connectionString: env.KEYHALL_DATABASE_URL });
    await db.connect();
    const drainDeadline = Date.now() + 90_000;
    let pending = Infinity;
    while (Date.now() < drainDeadline) {
      pending = Number((await db.query("select count(*) as n from webhook_deliveries where status in ('pending','delivering')")).rows[0].n);
      if (pending === 0) break;
      await sleep(500);
    }
    const failedDeliveries = Number((await db.query("select count(*) as n from webhook_deliveries where status = 'failed'")).rows[0].n);
    const eventRows = (await db.query("select id, data from events where type = 'member.added'")).rows as {
      id: string;
      data: string | Record<string, unknown>;
    }[];
    await db.end();

    // /v1/events, paged through the API: every member the load loop was told it added.
    const feedUsers = new Set<string>();
    let after: string | undefined;
    for (;;) {
      const page = await v1(a, 'GET', `/events?types=member.added&limit=100${after ? `&after=${after}` : ''}`);
      const data = (page?.json().data ?? []) as { id: string; data: { user_id?: string } }[];
      for (const e of data) if (e.data.user_id) feedUsers.add(e.data.user_id);
      const next = page?.json().next_cursor as string | null | undefined;
      if (!data.length || !next) break;
      after = next;
    }
    const lostEvents = counts.membersAdded.filter((u) => !feedUsers.has(u));
    const undelivered = eventRows.filter((e) => !receiver.events.has(e.id));
    const ttlOk = rotation ? rotation.seenWithinMs.every((ms) => ms <= CACHE_TTL_MS + 1000) : false;

    const checks: [string, boolean, string][] = [
      ['webhook backlog drained', pending === 0, `${pending} pending, ${failedDeliveries} given up`],
      [
        'every member.added event delivered at least once',
        undelivered.length === 0 && failedDeliveries === 0,
        `${eventRows.length - undelivered.length}/${eventRows.length} events delivered (${receiver.requests} requests, ${[...receiver.events.values()].filter((n) => n > 1).length} redelivered)`,
      ],
      ['no delivery attempted twice at once', receiver.overlaps === 0, `${receiver.overlaps} requests arrived while one of the same webhook-id was open`],
      [
        'no authorization code redeemed twice',
        counts.codeDoubleRedemptionSuccesses === 0,
        `${counts.codeDoubleRedemptionSuccesses} of ${counts.codeDoubleRedemptions} replays succeeded`,
      ],
      [
        'no refresh token with two valid successors',
        counts.refreshDoubleSuccessors === 0,
        `${counts.refreshDoubleSuccessors} of ${counts.refreshRaces} concurrent rotations gave two`,
      ],
      [
        'no lost /v1/events entry',
        lostEvents.length === 0,
        `${counts.membersAdded.length - lostEvents.length}/${counts.membersAdded.length} acknowledged member additions in the feed`,
      ],
      [
        'no 5xx outside the restart windows',
        counts.fiveXxOutsideWindows.length === 0,
        `${counts.fiveXxOutsideWindows.length} outside, ${counts.fiveXxInWindows} inside ${windows.length} windows${counts.fiveXxOutsideWindows.length ? `: ${counts.fiveXxOutsideWindows.slice(0, 3).join(' | ')}` : ''}`,
      ],
      [
        'key rotation seen by every instance within the cache TTL',
        ttlOk,
        rotation ? `${rotation.seenWithinMs.join(', ')} ms (TTL ${CACHE_TTL_MS} ms + 1 s)` : 'no rotation happened',
      ],
      ['no instance crashed', instances.every((i) => i.crashes.length === 0), instances.flatMap((i) => i.crashes).join(' | ') || '0 crashes'],
      ['PostgreSQL restarted once', counts.postgresRestarts === 1, `${counts.postgresRestarts}`],
      [
        'instances killed with SIGKILL and restarted',
        counts.kills >= 3 && counts.restarts === counts.kills,
        `${counts.kills} kills, ${counts.restarts} restarts`,
      ],
    ];
    log(
      `operations ${counts.operations} (answered ${counts.ok}, connection errors ${counts.connectionErrors}); logins ${counts.logins}, code flows ${counts.codeFlows}, ` +
        `refresh races ${counts.refreshRaces}, client_credentials ${counts.clientCredentials}, API-key calls ${counts.apiKeyCalls}, members added ${counts.membersAdded.length}`,
    );
    if (flowFailures.size) log(`code flows cut short: ${[...flowFailures].map(([r, n]) => `${n}× ${r}`).join(' | ')}`);
    let failed = 0;
    for (const [name, ok, detail] of checks) {
      log(`${ok ? 'PASS' : 'FAIL'}  ${name}: ${detail}`);
      if (!ok) failed++;
    }
    log(`${failed === 0 ? 'all invariants hold' : `${failed} invariant(s) violated`} (${Math.round((Date.now() - started) / 1000)} s)`);
    process.exitCode = failed === 0 ? 0 : 1;
  } finally {
    await Promise.all(instances.map((i) => i.kill()));
    await receiver.close();
    cluster.stop();
  }
}

await main();
