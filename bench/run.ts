/**
 * `npm run bench`: /token (client_credentials, client_secret_basic) and /introspect throughput
 * and latency on loopback, on SQLite and on PostgreSQL, against a bare Fastify route that only
 * signs one EdDSA JWT. Options (environment): BENCH_DURATION (seconds per run, default 10),
 * BENCH_CONNECTIONS (default 32), BENCH_DATABASE_URL (PostgreSQL admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres; set to `none` to skip PostgreSQL).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config/index.js';
import { startServer } from '../src/server.js';
import { startBaseline } from './baseline.js';
import { type LoadResult, runMeasuredLoad } from './load.js';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Row {
  scenario: string;
  db: string;
  result: LoadResult;
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

async function benchKeyhall(db: 'sqlite' | 'postgres'): Promise<Row[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-bench-'));
  const env: Record<string, string> = { KEYHALL_DATA_DIR: dataDir };
  let drop: (() => Promise<void>) | undefined;
  if (db === 'postgres') {
    const database = await freshPostgres();
    if (!database) return [];
    drop = database.drop;
    env.KEYHALL_DATABASE_URL = database.url;
    env.KEYHALL_MASTER_KEY = randomBytes(32).toString('base64');
  }
  const server = await startServer(loadConfig(env, { port: 0, host: '127.0.0.1', bootstrap: 'false', logLevel: 'silent' }));
  try {
    const host = `127.0.0.1:${server.port}`;
    const { tenant } = await server.ctx.tenants.create({ host });
    const client = await server.ctx.management.clients.create(tenant.id, { grant_types: ['client_credentials'], scope: 'read' });
    const authorization = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded', authorization };
    const first = await fetch(`http://${host}/token`, { method: 'POST', headers: form, body: 'grant_type=client_credentials' });
    const { access_token } = (await first.json()) as { access_token: string };
    const token = await runMeasuredLoad({ url: `http://${host}/token`, method: 'POST', headers: form, body: 'grant_type=client_credentials', durationSeconds: duration, connections });
    const introspect = await runMeasuredLoad({ url: `http://${host}/introspect`, method: 'POST', headers: form, body: `token=${access_token}`, durationSeconds: duration, connections });
    return [
      { scenario: '/token client_credentials', db, result: token },
      { scenario: '/introspect', db, result: introspect },
    ];
  } finally {
    await server.close();
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function printTable(rows: Row[], baseline: LoadResult): void {
  const header = ['scenario', 'db', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'non-2xx', 'baseline req/s ÷ req/s', 'CPU ÷ baseline CPU'];
  const lines = rows.map((r) => [
    r.scenario,
    r.db,
    r.result.requestsPerSecond.toFixed(0),
    String(r.result.p50),
    String(r.result.p99),
    r.result.cpuMicrosPerRequest?.toFixed(0) ?? '-',
    String(r.result.non2xx + r.result.errors),
    `${(baseline.requestsPerSecond / r.result.requestsPerSecond).toFixed(2)}x`,
    r.result.cpuMicrosPerRequest && baseline.cpuMicrosPerRequest ? `${(r.result.cpuMicrosPerRequest / baseline.cpuMicrosPerRequest).toFixed(2)}x` : '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(fmt(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const l of lines) console.log(fmt(l));
}

async function main(): Promise<void> {
  console.log(`bench: ${duration}s per run, ${connections} connections, Node ${process.version}, ${os.cpus().length} CPUs`);
  const base = await startBaseline();
  let baseline: LoadResult;
  try {
    baseline = await runMeasuredLoad({ url: base.url, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials', durationSeconds: duration, connections });
  } finally {
    await base.app.close();
  }
  const rows: Row[] = [{ scenario: 'baseline: bare Fastify + 1 EdDSA sign', db: '-', result: baseline }];
  rows.push(...(await benchKeyhall('sqlite')));
  rows.push(...(await benchKeyhall('postgres')));
  printTable(rows, baseline);
  const failed = rows.some((r) => r.result.non2xx + r.result.errors > 0);
  if (failed) {
    console.error('some requests failed');
    process.exitCode = 1;
  }
}

await main();
