import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/**
 * A database handle or an open transaction, as services pass it along to repositories (the
 * only name for Kysely outside src/storage/).
 */
export type Executor = Kysely<Database>;

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

export const SQLITE_FILE = 'keyhall.db';

/** Opens the database: PostgreSQL when a URL is given, else the embedded SQLite file. */
export function openDatabase(opts: { databaseUrl?: string; dataDir: string }): Db {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: 10,
      // int8 (bigint) columns hold epoch milliseconds: safe as JS numbers.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // An idle client losing its server (restart, failover) must not crash the process.
    pool.on('error', () => undefined);
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
  }
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(opts.dataDir, SQLITE_FILE);
  const database = new SQLite(file);
  // The database holds hashes and ciphertexts: readable by its owner only (WAL files follow).
  fs.chmodSync(file, 0o600);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
}

/** Brings the schema up to date. Safe to run from several instances at once (migration lock). */
export async function migrate(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db: db.kysely, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}

/** True when an error is a unique-constraint violation on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** The database server's clock, in epoch milliseconds (one clock for every instance). */
export async function databaseNow(db: Db): Promise<number> {
  if (db.dialect !== 'postgres') return Date.now();
  const { rows } = await sql<{ now: string | number }>`select (extract(epoch from clock_timestamp()) * 1000)::bigint as now`.execute(db.kysely);
  return Number(rows[0]?.now);
}
