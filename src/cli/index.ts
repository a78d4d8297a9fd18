import fs from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/index.js';
import { createContext } from '../context.js';
import { MasterKeyError } from '../kernel/crypto/master-key.js';
import { SIGNING_ALGS, type SigningAlg } from '../kernel/crypto/keystore.js';
import { isAppError } from '../kernel/errors.js';
import { TenantInputError } from '../kernel/tenancy.js';
import { FULL_PRIVILEGE_ONLY, isPermission, PERMISSIONS } from '../management/permissions.js';
import { startServer } from '../server.js';
import { migrate, openDatabase } from '../storage/db.js';
import { adminView, setupLink } from '../console/service.js';
import { currentPasswordSetBy } from '../storage/repos/users.js';
import { IMPORT_FORMATS, type ImportFormat } from '../transfers/parse.js';
import { newcomerBanner, servedTenantsNotice } from './banner.js';
import { describePlan, exportConfig, planConfig, PlanError } from '../config-as-code/tenant.js';
import { validateConfig } from '../config-as-code/schema.js';
import YAML from 'yaml';

const USAGE = `Usage: keyhall <command> [options]

Commands:
  serve [--port <n>] [--host <addr>]                 run the server (default 127.0.0.1:3000)
  migrate                                            bring the database schema up to date
  tenant create --host <host> [--issuer <url>] [--json]
                                                     create a tenant and its platform API key
  tenant list [--json]                               list tenants
  tenant update <id|host> [--host <host>] [--issuer <url>] [--json]
                                                     change a tenant's host and/or issuer
  tenant delete <id|host> --yes                      delete a tenant and all of its data
  api-keys create --tenant <id|host> [--scopes <a,b>] [--org <org_id>] [--name <text>] [--json]
                                                     mint an API key (shown once; default: every
                                                     permission, platform-bound)
  keys rotate --tenant <id|host> [--alg EdDSA|ES256|RS256|PS256] add new active signing keys
  admin create --tenant <id|host> (--email <email> [--password-stdin] | --link) [--json]
                                                     make a user a console administrator (a new
                                                     user takes its password from stdin), or
                                                     print a new one-time setup link
  admin list --tenant <id|host> [--json]             list the console administrators
  admin remove --tenant <id|host> --email <email> [--json]
                                                     take the administrator role away
  import users --tenant <id|host> --format <auth0|firebase|keycloak|cognito|jsonl|csv> FILE
         [--dry-run] [--source <name>] [--allow-legacy-sha] [--json]
         [--hash-key <b64> --salt-separator <b64> --rounds <n> --mem-cost <n>]
                                                     import users with their password hashes
                                                     (Firebase: the project's hash parameters);
                                                     a summary at the end (docs/import-export.md)
  export --tenant <id|host> [--include-secrets] [--out FILE]
                                                     write the tenant as JSONL (password hashes
                                                     only with --include-secrets)
  config export --tenant <id|host> [--out FILE]      write the tenant's configuration as YAML
                                                     (secrets as \${env:NAME} references)
  config apply --tenant <id|host> -f FILE [--dry-run] [--prune]
                                                     make the tenant match the file: prints the
                                                     changes, then applies them
                                                     (docs/config-as-code.md)
  help                                               show this text

Configuration comes from KEYHALL_* environment variables (see docs/configuration.md).`;

/** A mistake in how the command was called: exit code 2. */
export class UsageError extends Error {}

/** A failure the user can act on (busy port…): one line, exit code 1, no stack trace. */
export class RuntimeError extends Error {}

/** A configuration file that cannot be applied: one line per problem, exit code 1, nothing applied. */
class InvalidFileError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

const defaultIo: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) };

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The value of a string flag, refusing an empty one (named as the user typed it). */
function flag(values: Record<string, unknown>, name: string): string | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} needs a value`);
  return v;
}

/** Exactly one `<id|host>` positional. */
function onePositional(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`usage: ${usage}`);
  return positionals[0]!;
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
  const port = flag(values, 'port');
  if (port !== undefined && (!/^\d{1,5}$/.test(port) || Number(port) > 65535)) throw new UsageError('--port must be a number from 0 to 65535');
  const config = loadConfig(process.env, { port, host: flag(values, 'host') });
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const where = port !== undefined ? '--port' : process.env.KEYHALL_PORT !== undefined ? 'KEYHALL_PORT or --port' : '--port';
    if (code === 'EADDRINUSE') throw new RuntimeError(`port ${config.port} is in use; use ${where}`);
    const hostFlag = values.host !== undefined ? '--host' : 'KEYHALL_HOST or --host';
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') throw new RuntimeError(`cannot listen on ${config.host}; use ${hostFlag}`);
    if (code === 'EACCES') throw new RuntimeError(`no permission to listen on port ${config.port}; use ${where}`);
    throw err;
  }
  if (server.bootstrapped) io.out(newcomerBanner(server.bootstrapped, server.port));
  const notice = servedTenantsNotice(await server.ctx.tenants.list(), { host: config.host, port: server.port });
  for (const line of notice.lines) io.out(line);
  if (notice.warning) {
    io.err(notice.warning);
    server.app.log.warn({ port: server.port }, notice.warning);
  }
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
  // A closed terminal or session (whose default would end the process without writing out the
  // buffered log lines) stops it gracefully like SIGTERM.
  process.on('SIGHUP', () => stop('SIGHUP'));
  // Log lines are written asynchronously: whatever is still buffered goes out before the
  // process ends, a fatal error included.
  process.once('exit', () => server.ctx.logs.flush());
  process.once('uncaughtException', (err) => {
    server.app.log.fatal({ err }, 'uncaught exception');
    server.ctx.logs.flush();
    process.exit(1);
  });
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
      console_setup_link: setupLink(created.tenant.issuer, created.setupToken),
    };
    if (values.json) io.out(JSON.stringify(out));
    else {
      io.out(`Created tenant ${out.tenant_id} on ${out.host} (issuer ${out.issuer}).`);
      io.out(`Platform API key (shown once, store it now): ${out.platform_api_key}`);
      io.out(`Console setup link for the first administrator (one-time, valid 24 hours): ${out.console_setup_link}`);
    }
    return;
  }
  if (sub === 'list') {
    const { values } = parse(rest, { json: { type: 'boolean' } });
    const tenants = await withContext((ctx) => ctx.tenants.list());
    const rows = tenants.map((t) => ({ tenant_id: t.id, host: t.host, issuer: t.issuer, created_at: new Date(t.createdAt).toISOString() }));
    if (values.json) io.out(JSON.stringify(rows));
    else if (rows.length === 0) io.out('No tenants yet: keyhall tenant create --host <host>');
    else for (const r of rows) io.out(`${r.tenant_id}  ${r.host}  ${r.issuer}  ${r.created_at}`);
    return;
  }
  if (sub === 'update') {
    const usage = 'keyhall tenant update <id|host> [--host <host>] [--issuer <url>]';
    const { values, positionals } = parse(rest, { host: { type: 'string' }, issuer: { type: 'string' }, json: { type: 'boolean' } }, true);
    const which = onePositional(positionals, usage);
    const host = flag(values, 'host');
    const issuer = flag(values, 'issuer');
    if (host === undefined && issuer === undefined) throw new UsageError(`tenant update needs --host and/or --issuer (${usage})`);
    const updated = await withContext(async (ctx) => {
      const tenant = await ctx.tenants.find(which);
      if (!tenant) throw new UsageError(`no tenant ${which} (see keyhall tenant list)`);
      return ctx.tenants.update(tenant.id, { host, issuer });
    });
    const out = { tenant_id: updated.id, host: updated.host, issuer: updated.issuer };
    if (values.json) io.out(JSON.stringify(out));
    else io.out(`Updated tenant ${out.tenant_id}: host ${out.host}, issuer ${out.issuer}. Tokens issued under the previous issuer no longer validate.`);
    return;
  }
  if (sub === 'delete') {
    const usage = 'keyhall tenant delete <id|host> --yes';
    const { values, positionals } = parse(rest, { yes: { type: 'boolean' }, json: { type: 'boolean' } }, true);
    const which = onePositional(positionals, usage);
    if (!values.yes) throw new UsageError(`tenant delete removes the tenant and all of its data for good; add --yes to confirm (${usage})`);
    const deleted = await withContext(async (ctx) => {
      const tenant = await ctx.tenants.find(which);
      if (!tenant) throw new UsageError(`no tenant ${which} (see keyhall tenant list)`);
      const gone = await ctx.tenants.delete(tenant.id);
      // Its event feed went with it: the audit record of the deletion is this log line.
      ctx.log.warn(
        { event: 'tenant.deleted', tenant_id: gone.id, host: gone.host, issuer: gone.issuer, actor: { type: 'system', id: null } },
        'tenant deleted',
      );
      return gone;
    });
    if (values.json) io.out(JSON.stringify({ tenant_id: deleted.id, host: deleted.host, deleted: true }));
    else io.out(`Deleted tenant ${deleted.id} (${deleted.host}) and all of its data.`);
    return;
  }
  throw new UsageError('usage: keyhall tenant create|list|update|delete');
}

async function apiKeysCommand(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'create') throw new UsageError('usage: keyhall api-keys create --tenant <id|host> [--scopes <a,b>] [--org <org_id>]');
  const { values } = parse(rest, {
    tenant: { type: 'string' },
    scopes: { type: 'string' },
    org: { type: 'string' },
    name: { type: 'string' },
    json: { type: 'boolean' },
  });
  const which = flag(values, 'tenant');
  if (!which) throw new UsageError('api-keys create needs --tenant <id|host>');
  const scopesFlag = flag(values, 'scopes');
  const org = flag(values, 'org');
  // Without --scopes: every permission a key of that binding may hold (an org-bound key never
  // holds the full-privilege-only ones, such as domains:verify).
  const scopes =
    scopesFlag === undefined
      ? PERMISSIONS.filter((p) => org === undefined || !FULL_PRIVILEGE_ONLY.includes(p))
      : scopesFlag
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
  const unknown = scopes.filter((x) => !isPermission(x));
  if (unknown.length) throw new UsageError(`--scopes: unknown permission ${unknown.join(', ')} (known: ${PERMISSIONS.join(', ')})`);
  if (scopes.length === 0) throw new UsageError('--scopes needs at least one permission');
  if (org !== undefined && !/^org_[0-9a-z]{26}$/.test(org)) throw new UsageError(`--org must be an organization id (org_…), not ${JSON.stringify(org)}`);
  const name = flag(values, 'name') ?? 'created with keyhall api-keys create';
  const minted = await withContext(async (ctx) => {
    const tenant = await ctx.tenants.find(which);
    if (!tenant) throw new UsageError(`--tenant: no tenant ${which} (see keyhall tenant list)`);
    try {
      return { tenant, minted: await ctx.management.apiKeys.createAsOperator(tenant.id, org ?? null, { name, scopes }) };
    } catch (err) {
      if (isAppError(err) && err.status === 404) throw new UsageError(`--org: no organization ${org} in tenant ${tenant.id}`);
      throw err;
    }
  });
  const out = {
    tenant_id: minted.tenant.id,
    key_id: minted.minted.record.id,
    organization_id: minted.minted.record.organizationId,
    scopes: minted.minted.record.scopes,
    key: minted.minted.key,
  };
  if (values.json) io.out(JSON.stringify(out));
  else {
    io.out(`Created API key ${out.key_id} for tenant ${out.tenant_id}${out.organization_id ? ` (organization ${out.organization_id})` : ' (platform-bound)'}.`);
    io.out(`Scopes: ${out.scopes.join(' ')}`);
    io.out(`API key (shown once, store it now): ${out.key}`);
  }
}

async function keysCommand(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'rotate') throw new UsageError('usage: keyhall keys rotate --tenant <id|host>');
  const { values } = parse(rest, { tenant: { type: 'string' }, alg: { type: 'string' }, json: { type: 'boolean' } });
  if (!flag(values, 'tenant')) throw new UsageError('keys rotate needs --tenant <id|host>');
  const alg = values.alg === undefined ? undefined : String(values.alg);
  if (alg !== undefined && !SIGNING_ALGS.includes(alg as SigningAlg)) throw new UsageError(`--alg must be one of ${SIGNING_ALGS.join(', ')}`);
  const result = await withContext(async (ctx) => {
    const tenant = await ctx.tenants.find(String(values.tenant));
    if (!tenant) throw new UsageError(`--tenant: no tenant ${values.tenant} (see keyhall tenant list)`);
    const kids = await ctx.tenants.rotateKeys(tenant.id, alg ? [alg as SigningAlg] : undefined);
    return { tenant_id: tenant.id, new_kids: kids };
  });
  if (values.json) io.out(JSON.stringify(result));
  else io.out(`Rotated signing keys of ${result.tenant_id}; new key ids: ${result.new_kids.join(', ')}`);
}

/** Reads the whole of stdin (a password piped in, never on the command line). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function adminCommand(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  const usage = 'keyhall admin create|list|remove --tenant <id|host> …';
  if (sub !== 'create' && sub !== 'list' && sub !== 'remove') throw new UsageError(`usage: ${usage}`);
  const { values } = parse(rest, {
    tenant: { type: 'string' },
    email: { type: 'string' },
    'password-stdin': { type: 'boolean' },
    link: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const which = flag(values, 'tenant');
  if (!which) throw new UsageError(`admin ${sub} needs --tenant <id|host>`);
  const email = flag(values, 'email');
  if (sub === 'list' && (email !== undefined || values.link || values['password-stdin'])) throw new UsageError('admin list takes only --tenant and --json');
  if (sub === 'remove' && (email === undefined || values.link || values['password-stdin']))
    throw new UsageError('usage: keyhall admin remove --tenant <id|host> --email <email>');
  if (sub === 'create' && (email === undefined) === !values.link) throw new UsageError('admin create needs --email <email> or --link (not both)');
  if (values.link && values['password-stdin']) throw new UsageError('--password-stdin goes with --email');
  const password = values['password-stdin'] ? await readStdin() : undefined;
  if (password !== undefined && (password.length < 8 || password.length > 256)) throw new UsageError('the password must be 8 to 256 characters');

  await withContext(async (ctx) => {
    const tenant = await ctx.tenants.find(which);
    if (!tenant) throw new UsageError(`--tenant: no tenant ${which} (see keyhall tenant list)`);
    if (sub === 'list') {
      const rows = (await ctx.admins.list(tenant.id)).map(adminView);
      if (values.json) io.out(JSON.stringify(rows));
      else if (rows.length === 0) io.out(`No administrators yet: keyhall admin create --tenant ${tenant.host} --link`);
      else for (const r of rows) io.out(`${r.user_id}  ${r.email}  ${r.admin_since}`);
      return;
    }
    if (sub === 'create' && values.link) {
      const link = setupLink(tenant.issuer, await ctx.admins.issueSetupToken(tenant.id));
      if (values.json) io.out(JSON.stringify({ tenant_id: tenant.id, console_setup_link: link }));
      else io.out(`Console setup link (one-time, valid 24 hours): ${link}`);
      return;
    }
    const user = await ctx.management.users.list(tenant.id, undefined, 1, email!).then((users) => users[0]);
    if (sub === 'remove') {
      if (!user || !(await ctx.admins.revoke(tenant.id, user.id)))
        throw new UsageError(`${email} is not an administrator of ${tenant.host} (see keyhall admin list)`);
      if (values.json) io.out(JSON.stringify({ tenant_id: tenant.id, user_id: user.id, removed: true }));
      else io.out(`${user.email} is no longer an administrator of ${tenant.host}.`);
      return;
    }
    if (user && password !== undefined) throw new UsageError(`${user.email} already exists and keeps its password; drop --password-stdin`);
    if (!user && password === undefined) throw new UsageError(`no user ${email} in ${tenant.host}; pipe a password in with --password-stdin to create one`);
    const result = await ctx.admins.grant(tenant.id, email!, password);
    const out = { tenant_id: tenant.id, user_id: result.user.id, email: result.user.email, created_user: result.created, already_admin: !result.granted };
    // An existing account whose password a narrower key set (or nobody knows who): whoever did may
    // know it, and the account now holds the whole tenant (docs/console.md).
    const setBy = currentPasswordSetBy(result.user);
    if (result.granted && !result.created && result.user.passwordHash !== null && !setBy?.every_permission) {
      const who = setBy ? `API key ${setBy.id ?? '?'}, which does not hold every permission,` : 'someone not recorded';
      io.err(
        `Warning: ${who} set the password of ${result.user.email}; whoever did may know it. Set a new one with a key holding every permission (PATCH /v1/users/${result.user.id}) or on the console's Users screen.`,
      );
    }
    if (values.json) io.out(JSON.stringify(out));
    else if (!result.granted) io.out(`${out.email} already is an administrator of ${tenant.host}.`);
    else
      io.out(
        `${out.email} (${out.user_id}${result.created ? ', new user' : ''}) is now an administrator of ${tenant.host}: sign in at ${tenant.issuer}/console/`,
      );
  });
}

async function importCommand(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  const usage = 'keyhall import users --tenant <id|host> --format <format> FILE';
  if (sub !== 'users') throw new UsageError(`usage: ${usage}`);
  const { values, positionals } = parse(
    rest,
    {
      tenant: { type: 'string' },
      format: { type: 'string' },
      source: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'allow-legacy-sha': { type: 'boolean' },
      'hash-key': { type: 'string' },
      'salt-separator': { type: 'string' },
      rounds: { type: 'string' },
      'mem-cost': { type: 'string' },
      json: { type: 'boolean' },
    },
    true,
  );
  const file = onePositional(positionals, usage);
  const which = flag(values, 'tenant');
  if (!which) throw new UsageError('import users needs --tenant <id|host>');
  const format = flag(values, 'format');
  if (!format || !(IMPORT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${IMPORT_FORMATS.join(', ')}`);
  const source = flag(values, 'source');
  if (source !== undefined && !/^[a-z0-9_.-]{1,40}$/.test(source)) throw new UsageError('--source must be 1 to 40 of a-z 0-9 _ . -');
  const key = flag(values, 'hash-key');
  const sep = values['salt-separator'] === undefined ? undefined : String(values['salt-separator']);
  const rounds = flag(values, 'rounds');
  const memCost = flag(values, 'mem-cost');
  const given = [key, rounds, memCost].filter((v) => v !== undefined).length;
  if (given !== 0 && given !== 3) throw new UsageError('--hash-key, --rounds and --mem-cost go together (with --salt-separator)');
  const b64 = /^[A-Za-z0-9+/]*={0,2}$/;
  if ((key !== undefined && !b64.test(key)) || (sep !== undefined && !b64.test(sep))) throw new UsageError('--hash-key and --salt-separator are base64');
  const int = (v: string | undefined, name: string, max: number) => {
    if (v === undefined) return 0;
    if (!/^\d{1,2}$/.test(v) || Number(v) < 1 || Number(v) > max) throw new UsageError(`--${name} must be a number from 1 to ${max}`);
    return Number(v);
  };
  const hashConfig =
    key === undefined ? undefined : { signerKey: key, saltSeparator: sep ?? '', rounds: int(rounds, 'rounds', 64), memCost: int(memCost, 'mem-cost', 20) };
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (err) {
    throw new RuntimeError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const tty = process.stderr.isTTY === true && !values.json;
  const job = await withContext(async (ctx) => {
    const tenant = await ctx.tenants.find(which);
    if (!tenant) throw new UsageError(`--tenant: no tenant ${which} (see keyhall tenant list)`);
    return ctx.management.transfers.importNow(
      tenant.id,
      { type: 'system', id: null },
      data,
      { format: format as ImportFormat, source, dryRun: values['dry-run'] === true, allowLegacySha: values['allow-legacy-sha'] === true, hashConfig },
      tty ? (done, total) => process.stderr.write(`\rImporting: ${done}/${total} rows (${Math.floor((done / Math.max(total, 1)) * 100)}%)`) : undefined,
    );
  });
  if (tty) process.stderr.write('\n');
  const out = { import_id: job.id, status: job.status, dry_run: job.dryRun, counts: job.counts, error: job.error, rejected: job.report };
  if (values.json) io.out(JSON.stringify(out));
  else {
    const c = job.counts;
    io.out(
      `${job.dryRun ? 'Dry run (nothing written): ' : ''}import ${job.id} ${job.status}: ${c.rows ?? 0} rows, ${c.created ?? 0} created, ${c.updated ?? 0} updated, ${c.rejected ?? 0} rejected, ${c.skipped ?? 0} skipped; ${c.organizations_created ?? 0} organizations created, ${c.memberships ?? 0} memberships.`,
    );
    if (job.error) io.err(`keyhall: the import failed: ${job.error}`);
    for (const r of job.report.slice(0, 50))
      io.out(`  row ${r.row}${r.external_id ? ` (${r.external_id})` : ''}: ${r.reason}${r.detail ? ` - ${r.detail}` : ''}`);
    if (job.report.length > 50) io.out(`  … ${(job.counts.rejected ?? 0) - 50} more (--json lists them all)`);
  }
  if (job.status === 'failed') throw new RuntimeError(`import ${job.id} failed`);
}

async function exportCommand(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, { tenant: { type: 'string' }, 'include-secrets': { type: 'boolean' }, out: { type: 'string' } });
  const which = flag(values, 'tenant');
  if (!which) throw new UsageError('export needs --tenant <id|host>');
  const outFile = flag(values, 'out');
  const text = await withContext(async (ctx) => {
    const tenant = await ctx.tenants.find(which);
    if (!tenant) throw new UsageError(`--tenant: no tenant ${which} (see keyhall tenant list)`);
    return ctx.management.transfers.exportNow(tenant.id, { type: 'system', id: null }, values['include-secrets'] === true);
  });
  if (outFile === undefined) {
    process.stdout.write(text);
    return;
  }
  // Password hashes may be in it: readable by its owner only.
  fs.writeFileSync(outFile, text, { mode: 0o600 });
  io.err(`Wrote ${text.split('\n').length - 1} lines to ${outFile}.`);
}

async function configCommand(args: string[], io: Io): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'export') {
    const { values } = parse(rest, { tenant: { type: 'string' }, out: { type: 'string' } });
    const which = flag(values, 'tenant');
    if (!which) throw new UsageError('config export needs --tenant <id|host>');
    const outFile = flag(values, 'out');
    const { file, notes, issuer } = await withContext(async (ctx) => {
      const tenant = await ctx.tenants.find(which);
      if (!tenant) throw new UsageError(`--tenant: no tenant ${which} (see keyhall tenant list)`);
      return { ...(await exportConfig(ctx, tenant)), issuer: tenant.issuer };
    });
    for (const n of notes) io.err(`Note: ${n}`);
    // Editors that read the modeline (the YAML language server) validate the file as it is typed.
    const text = `# yaml-language-server: $schema=${issuer}/v1/config.schema.json\n${YAML.stringify(file, { lineWidth: 0, aliasDuplicateObjects: false })}`;
    if (outFile === undefined) process.stdout.write(text);
    else {
      fs.writeFileSync(outFile, text);
      io.err(`Wrote ${outFile}.`);
    }
    return;
  }
  if (sub !== 'apply') throw new UsageError('usage: keyhall config export|apply --tenant <id|host> …');
  const { values } = parse(rest, {
    tenant: { type: 'string' },
    file: { type: 'string', short: 'f' },
    'dry-run': { type: 'boolean' },
    prune: { type: 'boolean' },
  });
  const which = flag(values, 'tenant');
  if (!which) throw new UsageError('config apply needs --tenant <id|host>');
  const path = flag(values, 'file');
  if (!path) throw new UsageError('config apply needs -f <file>');
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new RuntimeError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const doc = YAML.parseDocument(text, { prettyErrors: false });
  if (doc.errors.length) throw new InvalidFileError(doc.errors.map((e) => `${path}: ${e.message.split('\n')[0]}`));
  const checked = validateConfig(doc.toJS());
  if (!checked.ok) throw new InvalidFileError(checked.errors.map((e) => `${path}: ${e}`));
  await withContext(async (ctx) => {
    const tenant = await ctx.tenants.find(which);
    if (!tenant) throw new UsageError(`--tenant: no tenant ${which} (see keyhall tenant list)`);
    let plan;
    try {
      plan = await planConfig(ctx, tenant, checked.file, { prune: values.prune === true, env: process.env });
    } catch (err) {
      if (err instanceof PlanError) throw new InvalidFileError(err.problems.map((e) => `${path}: ${e}`));
      throw err;
    }
    for (const line of describePlan(plan)) io.out(line);
    if (plan.changes.length === 0) {
      io.out(`No changes: ${tenant.host} matches ${path}.`);
      return;
    }
    if (values['dry-run']) {
      io.out(`Dry run: ${plan.changes.length} change(s) not applied.`);
      return;
    }
    let done = 0;
    for (const change of plan.changes) {
      let shown: string | void;
      try {
        shown = await change.run();
      } catch (err) {
        const why = isAppError(err) ? (err.description ?? err.code) : (err as Error).message;
        throw new RuntimeError(`${change.op} ${change.what} failed: ${why} (${done} of ${plan.changes.length} change(s) applied before it)`);
      }
      if (shown) io.err(shown);
      done += 1;
    }
    io.out(`Applied ${done} change(s) to ${tenant.host}.`);
  });
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
  if (command === undefined) {
    // No command is a usage mistake (exit 2); `keyhall help` and `--help` print to stdout, exit 0.
    io.err(USAGE);
    return 2;
  }
  try {
    switch (command) {
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
      case 'api-keys':
        await apiKeysCommand(args, io);
        return 0;
      case 'admin':
        await adminCommand(args, io);
        return 0;
      case 'import':
        await importCommand(args, io);
        return 0;
      case 'export':
        await exportCommand(args, io);
        return 0;
      case 'config':
        await configCommand(args, io);
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
    if (err instanceof InvalidFileError) {
      for (const p of err.problems) io.err(`keyhall: ${p}`);
      io.err('keyhall: nothing was applied.');
      return 1;
    }
    if (err instanceof MasterKeyError || err instanceof RuntimeError) {
      io.err(`keyhall: ${err.message}`);
      return 1;
    }
    io.err(`keyhall: ${(err as Error).stack ?? String(err)}`);
    return 1;
  }
}
