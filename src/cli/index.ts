import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/index.js';
import { createContext } from '../context.js';
import { MasterKeyError } from '../kernel/crypto/master-key.js';
import { SIGNING_ALGS, type SigningAlg } from '../kernel/crypto/keystore.js';
import { TenantInputError } from '../kernel/tenancy.js';
import { startServer } from '../server.js';
import { migrate, openDatabase } from '../storage/db.js';
import { newcomerBanner } from './banner.js';

const USAGE = `Usage: keyhall <command> [options]

Commands:
  serve [--port <n>] [--host <addr>]                 run the server (default 127.0.0.1:3000)
  migrate                                            bring the database schema up to date
  tenant create --host <host> [--issuer <url>] [--json]
                                                     create a tenant and its platform API key
  tenant list [--json]                               list tenants
  keys rotate --tenant <id|host> [--alg EdDSA|ES256|RS256|PS256] add new active signing keys
  help                                               show this text

Configuration comes from KEYHALL_* environment variables (see docs/configuration.md).`;

/** A mistake in how the command was called: exit code 2. */
export class UsageError extends Error {}

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const defaultIo: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) };

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

async function withContext<T>(fn: (ctx: Awaited<ReturnType<typeof createContext>>) => Promise<T>): Promise<T> {
  const ctx = await createContext(loadConfig());
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

async function serve(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, { port: { type: 'string' }, host: { type: 'string' } });
  if (values.port !== undefined && !/^\d{1,5}$/.test(String(values.port))) throw new UsageError('--port must be a number');
  const config = loadConfig(process.env, { port: values.port, host: values.host });
  const server = await startServer(config);
  if (server.bootstrapped) io.out(newcomerBanner(server.bootstrapped, server.port));
  let signals = 0;
  const stop = (signal: string) => {
    signals += 1;
    if (signals > 1) process.exit(1);
    server.app.log.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      (err) => {
        server.app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function tenantCommand(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'create') {
    const { values } = parse(rest, { host: { type: 'string' }, issuer: { type: 'string' }, json: { type: 'boolean' } });
    if (!values.host) throw new UsageError('tenant create needs --host <host>');
    const created = await withContext((ctx) =>
      ctx.tenants.create({ host: String(values.host), issuer: values.issuer === undefined ? undefined : String(values.issuer) }),
    );
    const out = {
      tenant_id: created.tenant.id,
      host: created.tenant.host,
      issuer: created.tenant.issuer,
      platform_api_key: created.platformApiKey,
    };
    if (values.json) io.out(JSON.stringify(out));
    else {
      io.out(`Created tenant ${out.tenant_id} on ${out.host} (issuer ${out.issuer}).`);
      io.out(`Platform API key (shown once, store it now): ${out.platform_api_key}`);
    }
    return;
  }
  if (sub === 'list') {
    const { values } = parse(rest, { json: { type: 'boolean' } });
    const tenants = await withContext((ctx) => ctx.tenants.list());
    const rows = tenants.map((t) => ({ tenant_id: t.id, host: t.host, issuer: t.issuer, created_at: new Date(t.createdAt).toISOString() }));
    if (values.json) io.out(JSON.stringify(rows));
    else for (const r of rows) io.out(`${r.tenant_id}  ${r.host}  ${r.issuer}  ${r.created_at}`);
    return;
  }
  throw new UsageError('usage: keyhall tenant create|list');
}

async function keysCommand(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'rotate') throw new UsageError('usage: keyhall keys rotate --tenant <id|host>');
  const { values } = parse(rest, { tenant: { type: 'string' }, alg: { type: 'string' }, json: { type: 'boolean' } });
  if (!values.tenant) throw new UsageError('keys rotate needs --tenant <id|host>');
  const alg = values.alg === undefined ? undefined : String(values.alg);
  if (alg !== undefined && !SIGNING_ALGS.includes(alg as SigningAlg)) throw new UsageError(`--alg must be one of ${SIGNING_ALGS.join(', ')}`);
  const result = await withContext(async (ctx) => {
    const tenant = await ctx.tenants.find(String(values.tenant));
    if (!tenant) throw new UsageError(`no tenant ${values.tenant}`);
    const kids = await ctx.tenants.rotateKeys(tenant.id, alg ? [alg as SigningAlg] : undefined);
    return { tenant_id: tenant.id, new_kids: kids };
  });
  if (values.json) io.out(JSON.stringify(result));
  else io.out(`Rotated signing keys of ${result.tenant_id}; new key ids: ${result.new_kids.join(', ')}`);
}

async function migrateCommand(io: Io): Promise<void> {
  const config = loadConfig();
  const db = openDatabase(config);
  try {
    const applied = await migrate(db);
    io.out(applied.length ? `Applied: ${applied.join(', ')}` : 'The database is up to date.');
  } finally {
    await db.close();
  }
}

/** Runs one CLI command. Resolves to the process exit code (serve keeps running). */
export async function runCli(argv: string[], io: Io = defaultIo): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command ?? 'serve') {
      case 'serve':
        await serve(args, io);
        return 0;
      case 'migrate':
        await migrateCommand(io);
        return 0;
      case 'tenant':
        await tenantCommand(args, io);
        return 0;
      case 'keys':
        await keysCommand(args, io);
        return 0;
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE);
        return 0;
      default:
        throw new UsageError(`unknown command: ${command}`);
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof TenantInputError || err instanceof ConfigError) {
      io.err(`keyhall: ${err.message}`);
      if (err instanceof UsageError) io.err(`Run 'keyhall help' for usage.`);
      return 2;
    }
    if (err instanceof MasterKeyError) {
      io.err(`keyhall: ${err.message}`);
      return 1;
    }
    io.err(`keyhall: ${(err as Error).stack ?? String(err)}`);
    return 1;
  }
}
