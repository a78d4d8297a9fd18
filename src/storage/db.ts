import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type KyselyConfig, Migrator, PostgresDialect, SqliteDialect, type SqliteDatabase, sql } from 'kysely';
import pg from 'pg';
import { Lru } from '../kernel/lru.js';
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

const require = createRequire(import.meta.url);

/**
 * The SQLite binding for this Node version. better-sqlite3 12 is the last line that runs on
 * Node 20, but on Node 24 it aborts the process (`RemoveEnvironmentCleanupHook … Assertion
 * failed: (env) != nullptr`) whenever the garbage collector finalizes one of its statements
 * outside a JavaScript context, at start-up as well as at exit. better-sqlite3 13 (Node-API,
 * prebuilt) fixes that but needs Node >= 22 and crashes on Node 20. So package.json has both:
 * 12 as `better-sqlite3`, 13 as the optional `better-sqlite3-node22` (npm installs it only on
 * Node >= 22, its `engines`); the same API, picked here.
 */
function sqliteBinding(): typeof SQLite {
  if (Number(process.versions.node.split('.')[0]) < 22) return SQLite;
  try {
    return require('better-sqlite3-node22') as typeof SQLite;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    throw new Error(`SQLite on Node ${process.versions.node} needs better-sqlite3-node22: run npm ci with this Node version`);
  }
}

/** How many prepared SQLite statements are kept for reuse (distinct query texts; LRU). */
const STATEMENT_CACHE_SIZE = 1000;

/**
 * The SQLite handle as Kysely sees it, with prepared statements reused: Kysely prepares every
 * query it runs, and preparing (parsing, planning) costs more than running most of ours. A query
 * text maps to one statement; Kysely's SQLite driver runs one query at a time (its connection
 * mutex), so a statement is never used by two queries at once.
 */
function reusingStatements(database: SqliteDatabase): SqliteDatabase {
  const statements = new Lru<string, ReturnType<SqliteDatabase['prepare']>>(STATEMENT_CACHE_SIZE);
  return {
    close: () => database.close(),
    prepare: (text: string) => {
      let statement = statements.get(text);
      if (!statement) {
        statement = database.prepare(text);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

/** Told each SQL statement an instance runs (its text), after it ran: how tests and the bench count statements per request. */
export type StatementListener = (sql: string) => void;

/** Kysely's log hook for a statement listener (per database handle: nothing process-global). */
const logTo = (onStatement: StatementListener | undefined): KyselyConfig['log'] =>
  onStatement &&
  ((event) => {
    if (event.level === 'query') onStatement(event.query.sql);
  });

/** Opens the database: PostgreSQL when a URL is given, else the embedded SQLite file. */
export function openDatabase(opts: { databaseUrl?: string; dataDir: string; databasePoolSize?: number; onStatement?: StatementListener }): Db {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.databasePoolSize ?? 10,
      // int8 (bigint) columns hold epoch milliseconds: safe as JS numbers.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // A client losing its server (restart, failover) must not crash the process. pg-pool
    // listens on idle clients only (the pool's 'error'); a checked-out client emits 'error'
    // with no listener between two queries. Its next query fails on its own, and pg-pool drops
    // a broken client when it is released.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: logTo(opts.onStatement) });
    const poolStats = (): PoolStats => ({ max: pool.options.max ?? 10, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
    return { kysely, dialect: 'postgres', poolStats, close: () => kysely.destroy() };
  }
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(opts.dataDir, SQLITE_FILE);
  const database = new (sqliteBinding())(file);
  // The database holds hashes and ciphertexts: readable by its owner only (WAL files follow).
  fs.chmodSync(file, 0o600);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: reusingStatements(database) }), log: logTo(opts.onStatement) });
  return { kysely, dialect: 'sqlite', poolStats: () => undefined, close: () => kysely.destroy() };
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

/** A row naming a parent row that no longer exists (deleted by a concurrent transaction). */
export function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** The database server's clock, in epoch milliseconds (one clock for every instance). */
export async function databaseNow(db: Db): Promise<number> {
  if (db.dialect !== 'postgres') return Date.now();
  const { rows } = await sql<{ now: string | number }>`select (extract(epoch from clock_timestamp()) * 1000)::bigint as now`.execute(db.kysely);
  return Number(rows[0]?.now);
}
