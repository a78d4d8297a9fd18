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

/** Connection pool occupancy (PostgreSQL; SQLite has one connection and no pool). */
export interface PoolStats {
  max: number;
  total: number;
  idle: number;
  waiting: number;
}

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** The pool's current occupancy; undefined on SQLite. */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

export const SQLITE_FILE = 'keyhall.db';

/**
 * SQLite handles still open, closed at process exit whatever path leads there.
 *
 * On Node 24, better-sqlite3 12 (its Statement and Database objects are node::ObjectWraps)
 * aborts the process after a clean exit: an object finalized during the environment's teardown
 * hits `RemoveEnvironmentCleanupHook … Assertion failed: (env) != nullptr`, closed database or
 * not (better-sqlite3 13 avoids it but needs Node >= 22 and crashes on Node 20). So once this
 * process has used SQLite, the exit handler closes the handles and ends the process with its
 * exit code there and then, skipping the teardown: nothing is left to flush (stdout and stderr
 * to files and pipes are synchronous; the databases are closed), and the exit code is kept.
 * Exit listeners registered after this one do not run; Keyhall registers none.
 */
const openSqlite = new Set<SQLite.Database>();
let exitHook = false;
function closeAtExit(database: SQLite.Database): void {
  openSqlite.add(database);
  if (exitHook) return;
  exitHook = true;
  process.on('exit', (code) => {
    for (const d of openSqlite) if (d.open) d.close();
    (process as unknown as { reallyExit(code: number): never }).reallyExit(process.exitCode === undefined ? code : Number(process.exitCode));
  });
}

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
    const poolStats = (): PoolStats => ({ max: pool.options.max ?? 10, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
    return { kysely, dialect: 'postgres', poolStats, close: () => kysely.destroy() };
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
  closeAtExit(database);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  const close = async () => {
    await kysely.destroy();
    openSqlite.delete(database);
  };
  return { kysely, dialect: 'sqlite', poolStats: () => undefined, close };
}

/** Brings the schema up to date. Safe to run from several instances at once (migration lock). */
export async function migrate(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db: db.kysely, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of the migrations this build knows that the database has not applied yet. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db: db.kysely, provider: migrationProvider });
  return (await migrator.getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
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
