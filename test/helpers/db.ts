import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** True when the suite runs on PostgreSQL (`npm run test:pg`). */
export const onPostgres = process.env.KEYHALL_TEST_DB === 'postgres';

const adminUrl = () => process.env.KEYHALL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Creates a fresh, empty PostgreSQL database for one test server; returns its URL and a dropper. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `keyhall_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * The environment of a fresh, empty Keyhall installation for a separate process: a temp data
 * dir, plus a new PostgreSQL database and master key when the suite runs on PostgreSQL.
 */
export async function freshInstallation(extra: Record<string, string> = {}): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dataDir = mkdtempSync(join(tmpdir(), 'keyhall-install-'));
  const env: Record<string, string> = { KEYHALL_DATA_DIR: dataDir, ...extra };
  let drop: (() => Promise<void>) | undefined;
  if (onPostgres) {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    env.KEYHALL_DATABASE_URL = db.url;
    env.KEYHALL_MASTER_KEY = randomBytes(32).toString('base64');
  }
  return {
    env,
    cleanup: async () => {
      await drop?.();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
