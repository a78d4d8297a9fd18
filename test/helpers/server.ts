import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Config, loadConfig } from '../../src/config/index.js';
import type { ContextOptions } from '../../src/context.js';
import { type RunningServer, startServer } from '../../src/server.js';
import type { CreatedTenant } from '../../src/tenants/service.js';
import { freshPostgresDatabase, onPostgres } from './db.js';
import { request } from './http.js';

export interface TestServer {
  port: number;
  server: RunningServer;
  config: Config;
  /** Environment that points a CLI process at this server's database. */
  env: Record<string, string>;
  /** A tenant on `127.0.0.1:<port>` (created at start unless `tenant: false`). */
  tenant: CreatedTenant;
  createTenant(host: string, issuer?: string): Promise<CreatedTenant>;
  /** HTTP to this server with an explicit Host (default: the main tenant's host). */
  request: (opts: Parameters<typeof request>[1]) => ReturnType<typeof request>;
  close(): Promise<void>;
}

/**
 * Starts the real server on a random port with a fresh database: SQLite in a temp dir, or a new
 * PostgreSQL database when the suite runs with KEYHALL_TEST_DB=postgres.
 */
export async function startTestServer(
  opts: ContextOptions & {
    config?: Partial<Record<keyof Config, unknown>>;
    /** Start a second instance on the first one's database (PostgreSQL only), sharing its tenant. */
    shareDatabaseWith?: TestServer;
    /** Serve the main tenant on `localhost:<port>` (a WebAuthn RP ID must be a domain, never an IP address). */
    localhost?: boolean;
    /**
     * Serve the main tenant on this host instead: a host without a port (`issuer.test`) gets the
     * https issuer of a production tenant, reached through `fetchVia(port)` (helpers/http.ts).
     */
    tenantHost?: string;
  } = {},
): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-test-'));
  const env: Record<string, string> = { KEYHALL_DATA_DIR: dataDir, KEYHALL_LOG_LEVEL: 'silent' };
  let drop: (() => Promise<void>) | undefined;
  if (opts.shareDatabaseWith) {
    Object.assign(env, opts.shareDatabaseWith.env, { KEYHALL_DATA_DIR: dataDir });
  } else if (onPostgres) {
    const database = await freshPostgresDatabase();
    drop = database.drop;
    env.KEYHALL_DATABASE_URL = database.url;
    env.KEYHALL_MASTER_KEY = randomBytes(32).toString('base64');
  }
  const config = loadConfig(env, {
    port: 0,
    host: '127.0.0.1',
    bootstrap: 'false',
    // Suites hammer /v1 with one key; the limit itself is tested with its own setting.
    apiRateLimit: 1_000_000,
    logLevel: process.env.KEYHALL_TEST_LOG_LEVEL ?? 'silent',
    ...opts.config,
  });
  const server = await startServer(config, {
    clock: opts.clock,
    egressResolver: opts.egressResolver,
    txtResolver: opts.txtResolver,
    logStream: opts.logStream,
    onStatement: opts.onStatement,
  });
  const port = server.port;
  const tenant =
    opts.shareDatabaseWith?.tenant ?? (await server.ctx.tenants.create({ host: opts.tenantHost ?? `${opts.localhost ? 'localhost' : '127.0.0.1'}:${port}` }));
  return {
    port,
    server,
    config,
    env,
    tenant,
    createTenant: (host, issuer) => server.ctx.tenants.create({ host, issuer }),
    request: (r) => request(port, { host: tenant.tenant.host, ...r }),
    close: async () => {
      await server.close();
      await drop?.();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
