/**
 * `npm run bench`: the ceiling (bare Fastify routes), the peer (node-oidc-provider 9) and Keyhall
 * on SQLite and on PostgreSQL, side by side, in rounds interleaved across targets; then Keyhall
 * with many tenants. Every server runs in its own process (bench/target.ts) started with
 * NODE_ENV=production, its logs (default level) to /dev/null; the load client is another process
 * (bench/load.ts). Server CPU per request is that process's own CPU time (process.cpuUsage over
 * IPC) divided by the requests completed: far less disturbed by other load than req/s; the main
 * thread's share of it (from /proc) is shown apart, the rest being the thread pool (argon2,
 * WebCrypto) and GC helpers. The targets run the compiled server from dist/ (bench/compiled.ts).
 *
 * Environment: BENCH_QUICK=1 (one short round, 100 tenants), BENCH_DURATION (seconds per timed
 * run of /token and /introspect; other scenarios get 60 % of it), BENCH_ROUNDS, BENCH_CONNECTIONS
 * (default 32), BENCH_LOGIN_USERS (virtual users of the code flow, default 4), BENCH_TENANTS (default 10000), BENCH_DATABASE_URL (PostgreSQL admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres; `none` skips PostgreSQL), BENCH_ONLY (comma-separated
 * scenario names as printed, or `tenants`, or `import`: users imported per second, bench/import.ts), BENCH_PROFILE (comma-separated target kinds, e.g.
 * `keyhall-sqlite,baseline`: a CPU profile of each one's first measured run of every scenario,
 * startup and warm-up excluded, in bench/profiles/; summarise with bench/profile-summary.ts).
 */
import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { LoadResult, LoadSpec } from './load.js';
import { BASELINE_PASSWORD, type Fixtures, PASSWORD, REDIRECT } from './fixtures.js';

const here = path.dirname(fileURLToPath(import.meta.url));

// The targets run the compiled server (bench/compiled.ts): build dist/ first if it is stale.
const built = spawnSync(process.execPath, [path.join(here, '..', 'scripts', 'build-if-stale.mjs'), '--server'], {
  cwd: path.join(here, '..'),
  stdio: 'inherit',
});
if (built.status !== 0) process.exit(built.status ?? 1);
const quick = process.env.BENCH_QUICK === '1';
const duration = Number(process.env.BENCH_DURATION ?? (quick ? 3 : 10));
const shortDuration = Math.max(2, Math.round(duration * 0.6));
const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3));
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const tenantCount = Number(process.env.BENCH_TENANTS ?? (quick ? 100 : 10_000));
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const profile = process.env.BENCH_PROFILE?.split(',').map((s) => s.trim());

/** A child process answering numbered requests over IPC. */
class Rpc {
  #next = 0;
  readonly #waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  constructor(readonly child: ChildProcess) {
    child.on('message', (m: { id?: number; value?: unknown; error?: string }) => {
      if (m.id === undefined) return;
      const w = this.#waiting.get(m.id);
      this.#waiting.delete(m.id);
      if (m.error !== undefined) w?.reject(new Error(m.error));
      else w?.resolve(m.value);
    });
    child.on('exit', (code) => {
      for (const w of this.#waiting.values()) w.reject(new Error(`child exited with ${code}`));
      this.#waiting.clear();
    });
  }
  call<T>(message: Record<string, unknown>): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, ...message });
    });
  }
}

function spawn(script: string, args: string[], env: Record<string, string>, execArgv: string[] = []): Promise<{ rpc: Rpc; hello: Record<string, unknown> }> {
  const child = fork(path.join(here, script), args, {
    execArgv: ['--import', 'tsx', ...execArgv],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (hello: Record<string, unknown>) => resolve({ rpc: new Rpc(child), hello }));
    child.once('exit', (code) => reject(new Error(`${script} ${args.join(' ')} exited with ${code} before it was ready`)));
  });
}

interface Target {
  name: string;
  kind: string;
  rpc: Rpc;
  port: number;
  fixtures: Fixtures;
  /** Extra fixtures the parent fetched (the peer's opaque token for /introspect). */
  extra: Record<string, string>;
  cleanup?: () => Promise<void>;
}

async function startTarget(name: string, kind: string, env: Record<string, string> = {}): Promise<Target> {
  const execArgv = ['--expose-gc'];
  const { rpc, hello } = await spawn(
    'target.ts',
    [kind],
    { NODE_ENV: 'production', BENCH_REFRESH_CHAINS: process.env.BENCH_REFRESH_CHAINS ?? String(connections * (rounds + 2) * 2), ...env },
    execArgv,
  );
  return { name, kind, rpc, port: hello.port as number, fixtures: hello.fixtures as Fixtures, extra: {} };
}

async function stopTarget(t: Target): Promise<void> {
  await t.rpc.call({ op: 'stop' }).catch(() => undefined);
  await t.cleanup?.();
}

async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  if (adminUrl === 'none') return undefined;
  const name = `keyhall_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    console.error(`PostgreSQL unavailable (${(err as Error).message}); skipping it`);
    return undefined;
  } finally {
    await admin.end().catch(() => undefined);
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const drop = async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
  return { url: url.toString(), drop };
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };

/** The peer's client_credentials body: its JWT access tokens need a resource indicator. */
function tokenBody(t: Target, resource?: string): string {
  return t.kind === 'peer'
    ? `grant_type=client_credentials&scope=read&resource=${encodeURIComponent(resource ?? t.fixtures.resource!)}`
    : 'grant_type=client_credentials';
}

interface Scenario {
  name: string;
  /** The target whose req/s is the ceiling for this scenario, if any. */
  ceiling?: string;
  seconds: number;
  spec(t: Target): LoadSpec | undefined;
}

const scenarios: Scenario[] = [
  {
    name: '/token client_credentials',
    ceiling: 'ceiling',
    seconds: duration,
    spec: (t) => ({
      kind: 'static',
      port: t.port,
      durationSeconds: 0,
      connections,
      method: 'POST',
      path: '/token',
      headers: { ...form, host: t.fixtures.host, authorization: t.fixtures.authorization },
      body: tokenBody(t),
    }),
  },
  {
    name: '/introspect',
    ceiling: 'ceiling',
    seconds: duration,
    spec: (t) => ({
      kind: 'static',
      port: t.port,
      durationSeconds: 0,
      connections,
      method: 'POST',
      path: t.kind === 'peer' ? '/token/introspection' : '/introspect',
      headers: { ...form, host: t.fixtures.host, authorization: t.fixtures.authorization },
      body: `token=${t.kind === 'peer' ? t.extra.opaqueToken : t.fixtures.introspectToken}`,
    }),
  },
  {
    name: '/token client_credentials + DPoP',
    seconds: shortDuration,
    spec: (t) =>
      t.kind === 'baseline'
        ? undefined
        : {
            kind: 'dpop',
            port: t.port,
            durationSeconds: 0,
            connections,
            path: '/token',
            headers: { ...form, host: t.fixtures.host, authorization: t.fixtures.authorization },
            body: tokenBody(t),
            htu: `http://${t.fixtures.host}/token`,
            expectedRate: 5000,
          },
  },
  {
    name: '/userinfo',
    seconds: shortDuration,
    spec: (t) =>
      t.fixtures.userinfoToken
        ? {
            kind: 'static',
            port: t.port,
            durationSeconds: 0,
            connections,
            method: 'GET',
            path: '/userinfo',
            headers: { host: t.fixtures.host, authorization: `Bearer ${t.fixtures.userinfoToken}` },
          }
        : undefined,
  },
  {
    name: '/token refresh rotation',
    seconds: shortDuration,
    spec: (t) =>
      t.fixtures.refreshTokens
        ? {
            kind: 'refresh',
            port: t.port,
            durationSeconds: 0,
            connections,
            path: '/token',
            headers: { ...form, host: t.fixtures.host, authorization: t.fixtures.web!.authorization },
            refreshTokens: t.fixtures.refreshTokens,
          }
        : undefined,
  },
  {
    name: 'code flow + PKCE (logins/s)',
    ceiling: 'ceiling',
    seconds: shortDuration,
    spec: (t) => {
      if (t.kind === 'baseline')
        return {
          kind: 'static',
          port: t.port,
          durationSeconds: 0,
          connections: 2,
          method: 'POST',
          path: '/argon2',
          headers: { ...form },
          body: `password=${encodeURIComponent(BASELINE_PASSWORD)}`,
        };
      if (!t.fixtures.web) return undefined;
      return {
        kind: 'codeflow',
        port: t.port,
        durationSeconds: 0,
        connections: Number(process.env.BENCH_LOGIN_USERS ?? 4),
        host: t.fixtures.host,
        clientId: t.fixtures.web.clientId,
        authorization: t.fixtures.web.authorization,
        email: t.fixtures.web.email,
        password: PASSWORD,
        redirectUri: REDIRECT,
      };
    },
  },
];

interface Measured extends LoadResult {
  cpuMicrosPerRequest: number;
  /** PostgreSQL's own CPU a request (its server processes on this machine), for the PostgreSQL target. */
  pgCpuMicrosPerRequest?: number;
  /** The main (JavaScript) thread's share: the rest is the thread pool (argon2, WebCrypto) and GC helpers. */
  mainCpuMicrosPerRequest: number;
}

async function measure(client: Rpc, t: Target, spec: LoadSpec, profileAs?: string): Promise<Measured> {
  const profiling = profileAs && profile?.includes(t.kind);
  if (profiling) await t.rpc.call({ op: 'profile-start' });
  const onPostgres = t.kind === 'keyhall-postgres';
  const pgBefore = onPostgres ? postgresCpuMicros() : 0;
  const before = await t.rpc.call<number>({ op: 'cpu' });
  const mainBefore = await t.rpc.call<number>({ op: 'cpu-main' });
  const r = await client.call<LoadResult>({ spec });
  const mainAfter = await t.rpc.call<number>({ op: 'cpu-main' });
  const after = await t.rpc.call<number>({ op: 'cpu' });
  const pgAfter = onPostgres ? postgresCpuMicros() : 0;
  if (profiling) {
    const file = path.join(here, 'profiles', `${t.kind}-${profileAs.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')}.cpuprofile`);
    console.error(`profile: ${await t.rpc.call<string>({ op: 'profile-stop', file })}`);
  }
  const per = (micros: number) => (r.total > 0 ? micros / r.total : 0);
  return {
    ...r,
    cpuMicrosPerRequest: per(after - before),
    mainCpuMicrosPerRequest: per(mainAfter - mainBefore),
    ...(onPostgres ? { pgCpuMicrosPerRequest: per(pgAfter - pgBefore) } : {}),
  };
}

/**
 * CPU time of every PostgreSQL server process on this machine (its backends, WAL writer,
 * checkpointer…), from /proc (Linux): what the database spends on Keyhall's statements. It counts
 * every database of the server, so it means something on a quiet machine only.
 */
function postgresCpuMicros(): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1e6) / 100; // USER_HZ
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function table(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}

async function peerOpaqueToken(t: Target): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${t.port}/token`, {
    method: 'POST',
    headers: { ...form, authorization: t.fixtures.authorization },
    body: tokenBody(t, t.fixtures.opaqueResource),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`peer token: ${JSON.stringify(body)}`);
  return body.access_token;
}

async function tenantsScenario(client: Rpc): Promise<{ text: string; ratio: number; rssDeltaMb: number; failures: number }> {
  const t = await startTarget('Keyhall SQLite, tenants', 'tenants');
  try {
    const one = [{ host: t.fixtures.host, authorization: t.fixtures.authorization }];
    const rr = (targets: typeof one, seconds: number): LoadSpec => ({
      kind: 'roundrobin',
      port: t.port,
      durationSeconds: seconds,
      connections,
      path: '/token',
      targets,
      body: 'grant_type=client_credentials',
    });
    await client.call({ spec: rr(one, 2) });
    const rssOne = await t.rpc.call<number>({ op: 'rss' });
    const started = performance.now();
    const all = await t.rpc.call<typeof one>({ op: 'tenants', count: tenantCount });
    const createSeconds = (performance.now() - started) / 1000;
    await client.call({ spec: rr(all, Math.max(2, shortDuration)) });
    const rssAll = await t.rpc.call<number>({ op: 'rss' });
    const oneRuns: Measured[] = [];
    const allRuns: Measured[] = [];
    for (let r = 0; r < rounds; r++) {
      oneRuns.push(await measure(client, t, rr(one, shortDuration), r === 0 ? 'one tenant' : undefined));
      allRuns.push(await measure(client, t, rr(all, shortDuration), r === 0 ? 'all tenants' : undefined));
    }
    const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
    const row = (label: string, runs: Measured[], rss: number) => [
      label,
      median(runs.map((x) => x.rate)).toFixed(0),
      median(runs.map((x) => x.p50)).toFixed(1),
      median(runs.map((x) => x.p99)).toFixed(1),
      median(runs.map((x) => x.cpuMicrosPerRequest)).toFixed(0),
      mb(rss),
      String(runs.reduce((a, x) => a + x.failures, 0)),
    ];
    const ratio = median(allRuns.map((x) => x.rate)) / median(oneRuns.map((x) => x.rate));
    const text = [
      `\n### ${tenantCount} tenants on one instance (SQLite): /token client_credentials round-robin across tenants (created in ${createSeconds.toFixed(1)} s, ${((all.length - 1) / createSeconds).toFixed(0)} a second)\n`,
      table(
        ['tenants', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'RSS after warm-up', 'failed'],
        [row('1', oneRuns, rssOne), row(String(all.length), allRuns, rssAll)],
      ),
      `\nthroughput ${tenantCount} ÷ 1: ${ratio.toFixed(2)}×; RSS +${mb(rssAll - rssOne)}`,
    ].join('\n');
    const failures = [...oneRuns, ...allRuns].reduce((a, x) => a + x.failures, 0);
    return { text, ratio, rssDeltaMb: (rssAll - rssOne) / 1024 / 1024, failures };
  } finally {
    await stopTarget(t);
  }
}

async function main(): Promise<void> {
  console.log(
    `bench: ${rounds} round(s), ${duration}/${shortDuration} s per run, ${connections} connections, Node ${process.version}, ${os.cpus().length}× ${os.cpus()[0]?.model ?? 'CPU'}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const { rpc: client } = await spawn('load.ts', [], {});
  const targets: Target[] = [];
  try {
    targets.push(await startTarget('ceiling', 'baseline'));
    targets.push(await startTarget('peer (oidc-provider 9)', 'peer'));
    targets[1]!.extra.opaqueToken = await peerOpaqueToken(targets[1]!);
    targets.push(await startTarget('Keyhall SQLite', 'keyhall-sqlite'));
    const database = await freshPostgres();
    if (database) {
      const t = await startTarget('Keyhall PostgreSQL', 'keyhall-postgres', {
        KEYHALL_DATABASE_URL: database.url,
        KEYHALL_MASTER_KEY: randomBytes(32).toString('base64'),
      });
      t.cleanup = database.drop;
      targets.push(t);
    }
    const active = scenarios.filter((s) => !only || only.includes(s.name));
    const runs = new Map<string, Measured[]>();
    const key = (s: Scenario, t: Target) => `${s.name}\u0000${t.name}`;
    // Warm-up (JIT, caches, connection pools), then interleaved rounds.
    for (const s of active)
      for (const t of targets) {
        const spec = s.spec(t);
        if (spec) await client.call({ spec: { ...spec, durationSeconds: quick ? 1 : 2 } });
      }
    for (let r = 0; r < rounds; r++) {
      for (const s of active)
        for (const t of targets) {
          const spec = s.spec(t);
          if (!spec) continue;
          const m = await measure(client, t, { ...spec, durationSeconds: s.seconds }, r === 0 ? s.name : undefined);
          if (m.failures) console.error(`${s.name} on ${t.name}: ${m.failures} failed (${m.sample ?? ''})`);
          runs.set(key(s, t), [...(runs.get(key(s, t)) ?? []), m]);
        }
      console.error(`round ${r + 1}/${rounds} done`);
    }
    const lines: string[][] = [];
    let failed = false;
    for (const s of active) {
      const rate = (t: Target | undefined) => (t && runs.get(key(s, t)) ? median(runs.get(key(s, t))!.map((x) => x.rate)) : undefined);
      const ceiling = rate(targets.find((t) => t.kind === 'baseline'));
      const peer = rate(targets.find((t) => t.kind === 'peer'));
      for (const t of targets) {
        const rs = runs.get(key(s, t));
        if (!rs) continue;
        const own = median(rs.map((x) => x.rate));
        const ours = t.kind.startsWith('keyhall');
        const fails = rs.reduce((a, x) => a + x.failures, 0);
        failed ||= fails > 0;
        lines.push([
          s.name,
          t.kind === 'baseline' && s.name.startsWith('code flow') ? 'ceiling: 2 parallel argon2id' : t.name,
          own.toFixed(0),
          median(rs.map((x) => x.p50)).toFixed(1),
          median(rs.map((x) => x.p99)).toFixed(1),
          median(rs.map((x) => x.cpuMicrosPerRequest)).toFixed(0),
          median(rs.map((x) => x.mainCpuMicrosPerRequest)).toFixed(0),
          t.kind === 'keyhall-postgres' ? median(rs.map((x) => x.pgCpuMicrosPerRequest ?? 0)).toFixed(0) : '',
          ours && ceiling && s.ceiling ? `${(own / ceiling).toFixed(2)}×` : '',
          ours && peer ? `${(own / peer).toFixed(2)}×` : '',
          String(fails),
        ]);
      }
    }
    console.log(`\n### Side by side (medians of ${rounds} interleaved round(s))\n`);
    console.log(
      table(
        [
          'scenario',
          'target',
          'req/s',
          'p50 ms',
          'p99 ms',
          'server CPU µs/req',
          'main thread µs/req',
          'PostgreSQL CPU µs/req',
          'ours ÷ ceiling',
          'ours ÷ peer',
          'failed',
        ],
        lines,
      ),
    );
    // The goals of issue 13, checked on this run's medians.
    const med = (scenario: string, kind: string, f: (m: Measured) => number) => {
      const t = targets.find((x) => x.kind === kind);
      const rs = t && runs.get(`${scenario}\u0000${t.name}`);
      return rs ? median(rs.map(f)) : undefined;
    };
    const rate = (scenario: string, kind: string) => med(scenario, kind, (m) => m.rate);
    const ratioOf = (scenario: string, kind: string, versus: string) => {
      const a = rate(scenario, kind);
      const b = rate(scenario, versus);
      return a !== undefined && b !== undefined ? a / b : undefined;
    };
    const goals: Array<[string, number | undefined, (v: number) => boolean]> = [
      ['/token client_credentials, SQLite ÷ ceiling ≥ 0.8', ratioOf('/token client_credentials', 'keyhall-sqlite', 'baseline'), (v) => v >= 0.8],
      ['/token client_credentials, SQLite ÷ peer ≥ 2', ratioOf('/token client_credentials', 'keyhall-sqlite', 'peer'), (v) => v >= 2],
      [
        '/token client_credentials, SQLite p99 ÷ peer p99 ≤ 1',
        (() => {
          const a = med('/token client_credentials', 'keyhall-sqlite', (m) => m.p99);
          const b = med('/token client_credentials', 'peer', (m) => m.p99);
          return a !== undefined && b ? a / b : undefined;
        })(),
        (v) => v <= 1,
      ],
      ['/token client_credentials, PostgreSQL ÷ ceiling ≥ 0.65', ratioOf('/token client_credentials', 'keyhall-postgres', 'baseline'), (v) => v >= 0.65],
      ['/introspect, SQLite ÷ ceiling ≥ 0.8', ratioOf('/introspect', 'keyhall-sqlite', 'baseline'), (v) => v >= 0.8],
      ['code flow, SQLite ÷ argon2 ceiling ≥ 0.9', ratioOf('code flow + PKCE (logins/s)', 'keyhall-sqlite', 'baseline'), (v) => v >= 0.9],
    ];
    // The goals of issue 35: server CPU per request, ours against the argon2 verification and the
    // ceiling, PostgreSQL's own CPU counted where it runs.
    const cpu = (scenario: string, kind: string) => med(scenario, kind, (m) => m.cpuMicrosPerRequest);
    const pgCpu = (scenario: string) => med(scenario, 'keyhall-postgres', (m) => m.pgCpuMicrosPerRequest ?? 0);
    const withDb = (scenario: string) => {
      const a = cpu(scenario, 'keyhall-postgres');
      const b = pgCpu(scenario);
      return a !== undefined && b !== undefined ? a + b : undefined;
    };
    const over = (a: number | undefined, b: number | undefined) => (a !== undefined && b ? a / b : undefined);
    const login = 'code flow + PKCE (logins/s)';
    const argon2 = cpu(login, 'baseline');
    const beyondArgon2 = (kind: string) => {
      const c = cpu(login, kind);
      return c !== undefined && argon2 ? (c - argon2) / argon2 : undefined;
    };
    goals.push(
      ['code flow, SQLite: server CPU a login beyond argon2 ≤ 0.2× one argon2 verification', beyondArgon2('keyhall-sqlite'), (v) => v <= 0.2],
      ['code flow, PostgreSQL: server CPU a login beyond argon2 ≤ 0.3× one argon2 verification', beyondArgon2('keyhall-postgres'), (v) => v <= 0.3],
      [
        "code flow, PostgreSQL's own CPU a login < 2 ms",
        (() => {
          const v = pgCpu(login);
          return v === undefined ? undefined : v / 1000;
        })(),
        (v) => v < 2,
      ],
      ['/userinfo, PostgreSQL (server + database CPU) ÷ SQLite CPU ≤ 1.3', over(withDb('/userinfo'), cpu('/userinfo', 'keyhall-sqlite')), (v) => v <= 1.3],
      [
        'refresh rotation, PostgreSQL (server + database CPU) ÷ SQLite CPU ≤ 1.3',
        over(withDb('/token refresh rotation'), cpu('/token refresh rotation', 'keyhall-sqlite')),
        (v) => v <= 1.3,
      ],
      [
        '/token client_credentials, SQLite CPU ÷ ceiling CPU ≤ 1.45',
        over(cpu('/token client_credentials', 'keyhall-sqlite'), cpu('/token client_credentials', 'baseline')),
        (v) => v <= 1.45,
      ],
    );
    let tenantMbPerThousand: number | undefined;
    if (!only || only.includes('tenants')) {
      const tenants = await tenantsScenario(client);
      tenantMbPerThousand = (tenants.rssDeltaMb / Math.max(1, tenantCount - 1)) * 1000;
      console.log(tenants.text);
      failed ||= tenants.failures > 0;
      // Issue 35: 10,000 tenants within 300 MB more RSS and 0.85× the throughput of one.
      goals.push([`${tenantCount} tenants: RSS growth ≤ 300 MB`, tenants.rssDeltaMb, (v) => v <= 300]);
      goals.push([`${tenantCount} tenants: throughput ÷ one tenant ≥ 0.85`, tenants.ratio, (v) => v >= 0.85]);
    }
    if (!only || only.includes('import')) {
      // Users imported per second (bench/import.ts, its own process and database).
      const imported = spawnSync(process.execPath, ['--import', 'tsx', path.join(here, 'import.ts')], { cwd: path.join(here, '..'), stdio: 'inherit' });
      failed ||= imported.status !== 0;
    }
    console.log(
      sizingText(
        (scenario) => ({ sqlite: cpu(scenario, 'keyhall-sqlite'), postgres: cpu(scenario, 'keyhall-postgres'), database: pgCpu(scenario) }),
        tenantMbPerThousand,
      ),
    );
    console.log('\n### Goals (issues 13 and 35) on this run\n');
    for (const [name, value, ok] of goals)
      console.log(`- ${value === undefined ? '–' : ok(value) ? 'met' : 'NOT met'}: ${name} (${value === undefined ? 'not measured' : value.toFixed(2)})`);
    if (failed) {
      console.error('some requests failed');
      process.exitCode = 1;
    }
  } finally {
    for (const t of targets) await stopTarget(t);
    client.child.send({ stop: true });
  }
}

/**
 * The sizing guide's numbers (docs/sizing.md, in Keycloak's format): requests a second per vCPU
 * from this run's server CPU a request (PostgreSQL's own CPU shown apart), and the instances a
 * login rate needs on PostgreSQL, with 2-vCPU instances kept at 70 % CPU.
 */
function sizingText(cpuOf: (scenario: string) => { sqlite?: number; postgres?: number; database?: number }, tenantMbPerThousand: number | undefined): string {
  const perVcpu = (micros: number | undefined) => (micros ? Math.floor(1e6 / micros).toString() : '–');
  const rows = (
    [
      ['password logins (code flow + PKCE, argon2id)', 'code flow + PKCE (logins/s)'],
      ['client_credentials tokens', '/token client_credentials'],
      ['refresh token rotations', '/token refresh rotation'],
      ['introspections', '/introspect'],
      ['/userinfo', '/userinfo'],
    ] as const
  ).map(([label, scenario]) => {
    const c = cpuOf(scenario);
    return [label, perVcpu(c.sqlite), perVcpu(c.postgres), c.database !== undefined ? perVcpu(c.database) : '–'];
  });
  const utilisation = 0.7;
  const instanceVcpus = 2;
  const logins = cpuOf('code flow + PKCE (logins/s)');
  const instances = [100, 1_000, 10_000].map((rate) => {
    const app = logins.postgres ? Math.ceil((rate * logins.postgres) / (instanceVcpus * utilisation * 1e6)) : undefined;
    const db = logins.database ? Math.ceil((rate * logins.database) / (utilisation * 1e6)) : undefined;
    return [`${rate.toLocaleString('en')} logins/s`, app === undefined ? '–' : String(app), db === undefined ? '–' : String(db)];
  });
  return [
    '\n### Sizing (per vCPU, from this run; docs/sizing.md)\n',
    table(['requests a second per vCPU', 'Keyhall SQLite', 'Keyhall on PostgreSQL', "PostgreSQL's own vCPU"], rows),
    `\nOn PostgreSQL (2-vCPU instances at ${utilisation * 100} % CPU; PostgreSQL's vCPUs at the same load):\n`,
    table(['load', 'Keyhall instances', 'PostgreSQL vCPUs'], instances),
    `\nMemory: ${tenantMbPerThousand === undefined ? 'not measured (the tenants scenario did not run)' : `${tenantMbPerThousand.toFixed(1)} MB RSS per 1,000 tenants`}.`,
  ].join('\n');
}

await main();
