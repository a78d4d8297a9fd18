/**
 * The atomic primitives of docs/storage.md, written once: consume-once, compare-and-set, claiming
 * work with a lease, fixed-window counters, and the periodic sweep of expired rows. Each decides
 * its outcome in one statement (its affected-row count or RETURNING), never by a read followed by
 * a separate write, so it holds with several instances on one database. Callers name tables and
 * columns; the conditions are checked against the table types, the statements themselves are
 * built on an untyped view of the database.
 */
import {
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type Selectable,
  type SelectQueryBuilder,
  type SqlBool,
  type UpdateObject,
  sql,
} from 'kysely';
import type { Dialect } from './db.js';
import type { Database } from './schema.js';

type Table = keyof Database;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Untyped = Kysely<any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyBuilder = ExpressionBuilder<any, any>;

/** Equality conditions on columns of `T`, ANDed; a null value means IS NULL. */
export type Match<T extends Table> = { [C in keyof Database[T]]?: Database[T][C] };
/** A further condition on rows of `T`. */
export type Condition<T extends Table> = (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;
/** Columns of `T` whose values are of type `V`. */
type ColumnsOf<T extends Table, V> = { [C in keyof Database[T]]: Database[T][C] extends V ? C : never }[keyof Database[T]] & string;

function matching(eb: AnyBuilder, m: Record<string, unknown>): Expression<SqlBool> {
  const parts = Object.entries(m)
    .filter(([, v]) => v !== undefined)
    .map(([c, v]) => (v === null ? eb(c, 'is', null) : eb(c, '=', v)));
  return eb.and(parts);
}

function casQuery<T extends Table>(db: Kysely<Database>, table: T, q: CasQuery<T>) {
  const also = q.also as ((eb: AnyBuilder) => Expression<SqlBool>) | undefined;
  return (db as Untyped)
    .updateTable(table as string)
    .set(q.set as Record<string, unknown>)
    .where((eb) => matching(eb, q.key as Record<string, unknown>))
    .where((eb) => matching(eb, q.seen as Record<string, unknown>))
    .$if(also !== undefined, (qb) => qb.where((eb) => (also as (eb: AnyBuilder) => Expression<SqlBool>)(eb)));
}

export interface CasQuery<T extends Table> {
  /** The row. */
  key: Match<T>;
  /** The state the caller saw (the version, owner or status it read). */
  seen: Match<T>;
  /** The next state. */
  set: UpdateObject<Database, T>;
  also?: Condition<T>;
}

/**
 * Compare-and-set: `UPDATE t SET set WHERE key AND seen [AND also]`. True: this caller moved the
 * row; false: another caller moved it first, or there is no such row.
 */
export async function compareAndSet<T extends Table>(db: Kysely<Database>, table: T, q: CasQuery<T>): Promise<boolean> {
  const r = await casQuery(db, table, q).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Compare-and-set returning the updated row (undefined when another caller moved first). */
export async function compareAndSetRow<T extends Table>(db: Kysely<Database>, table: T, q: CasQuery<T>): Promise<Selectable<Database[T]> | undefined> {
  return (await casQuery(db, table, q).returningAll().executeTakeFirst()) as Selectable<Database[T]> | undefined;
}

/**
 * Consume-once by update: sets `column` (a consumed/completed time) to `now` on the row `key`
 * names, only while it is null, [`expiresColumn` > now] [and `also`]. Exactly one caller gets
 * true; already used, expired and unknown are all false.
 */
export function consumeOnce<T extends Table>(
  db: Kysely<Database>,
  table: T,
  q: { key: Match<T>; column: ColumnsOf<T, number | null>; now: number; expiresColumn?: ColumnsOf<T, number>; also?: Condition<T> },
): Promise<boolean> {
  const { expiresColumn, also, now } = q;
  const live = (eb: AnyBuilder) =>
    eb.and([...(expiresColumn ? [eb(expiresColumn as string, '>', now)] : []), ...(also ? [(also as (eb: AnyBuilder) => Expression<SqlBool>)(eb)] : [])]);
  return compareAndSet(db, table, {
    key: q.key,
    seen: { [q.column]: null } as Match<T>,
    set: { [q.column]: now } as UpdateObject<Database, T>,
    ...(expiresColumn || also ? { also: live as Condition<T> } : {}),
  });
}

/**
 * Consume-once by insert: inserts `values`; on a conflict on `unique` the existing row is taken
 * over (its other columns replaced by these) only if it has expired (`expiresColumn` <= now), so
 * an expired entry no longer blocks its key. True: this caller's row landed.
 */
export async function insertOnce<T extends Table>(
  db: Kysely<Database>,
  table: T,
  values: Insertable<Database[T]>,
  q: { unique: readonly ColumnsOf<T, unknown>[]; expiresColumn?: ColumnsOf<T, number>; now?: number },
): Promise<boolean> {
  const { expiresColumn, now } = q;
  const others = Object.keys(values).filter((c) => !(q.unique as readonly string[]).includes(c));
  const r = await (db as Untyped)
    .insertInto(table as string)
    .values(values)
    .onConflict((oc) => {
      const on = oc.columns([...q.unique] as string[]);
      if (!expiresColumn || now === undefined) return on.doNothing();
      return on
        .doUpdateSet(Object.fromEntries(others.map((c) => [c, (eb: AnyBuilder) => eb.ref(`excluded.${c}`)])))
        .where(sql.ref(`${table}.${expiresColumn}`), '<=', now);
    })
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

type WindowTable = { [K in Table]: Database[K] extends { count: number; window_ends_at: number } ? K : never }[Table];

/**
 * One hit on a fixed-window counter (`count`, `window_ends_at`), in one statement: a new key
 * starts at 1, an ended window restarts at 1, else one is added — with `max`, only while the
 * count is under it. True: counted. Concurrent callers can never count more than `max`.
 */
export async function countInWindow<T extends WindowTable>(
  db: Kysely<Database>,
  table: T,
  key: Match<T>,
  q: { now: number; windowMs: number; max?: number },
): Promise<boolean> {
  const { now, max } = q;
  const ends = now + q.windowMs;
  const col = (c: 'count' | 'window_ends_at') => `${table}.${c}`;
  const row = await (db as Untyped)
    .insertInto(table as string)
    .values({ ...key, count: 1, window_ends_at: ends })
    .onConflict((oc) => {
      const update = oc.columns(Object.keys(key)).doUpdateSet((eb) => ({
        count: eb
          .case()
          .when(col('window_ends_at'), '<=', now)
          .then(1)
          .else(eb(col('count'), '+', 1))
          .end(),
        window_ends_at: eb
          .case()
          .when(col('window_ends_at'), '<=', now)
          .then(ends)
          .else(eb.ref(col('window_ends_at')))
          .end(),
      }));
      return max === undefined ? update : update.where((eb) => eb.or([eb(col('window_ends_at'), '<=', now), eb(col('count'), '<', max)]));
    })
    .returning('count')
    .executeTakeFirst();
  return row !== undefined;
}

type LeaseTable = { [K in Table]: Database[K] extends { id: string; lease_owner: string | null; lease_until: number | null } ? K : never }[Table];

/**
 * Claims work with a lease: sets `lease_owner`/`lease_until` (and `set`) on the rows `candidates`
 * selects that are still `due`, and returns them. On PostgreSQL the candidates are locked with
 * FOR UPDATE SKIP LOCKED, so concurrent claimers never take the same row; SQLite has one writer.
 * A lease that runs out makes its row claimable again when `due` says so. Give back or complete
 * a claimed row with `compareAndSet` on `lease_owner`.
 */
export async function claimWithLease<T extends LeaseTable>(
  db: Kysely<Database>,
  dialect: Dialect,
  table: T,
  q: {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    candidates: SelectQueryBuilder<Database, any, { id: string }>;
    due: Condition<T>;
    owner: string;
    leaseUntil: number;
    set?: UpdateObject<Database, T>;
  },
): Promise<Selectable<Database[T]>[]> {
  const u = db as Untyped;
  const claimable =
    dialect === 'postgres'
      ? u
          .selectFrom(table as string)
          .select('id')
          .where('id', 'in', q.candidates)
          .forUpdate()
          .skipLocked()
      : q.candidates;
  const rows = await u
    .updateTable(table as string)
    .set({ ...(q.set as Record<string, unknown>), lease_owner: q.owner, lease_until: q.leaseUntil })
    .where('id', 'in', claimable)
    .where((eb) => (q.due as unknown as (eb: AnyBuilder) => Expression<SqlBool>)(eb))
    .returningAll()
    .execute();
  return rows as Selectable<Database[T]>[];
}

/**
 * Takes the write lock of the row `key` names for the rest of the transaction (a no-op UPDATE of
 * `column`: a row lock on PostgreSQL, the write lock on SQLite), so concurrent writers of one
 * resource queue instead of failing their compare-and-set. False: no such row.
 */
export async function lockRow<T extends Table>(db: Kysely<Database>, table: T, key: Match<T>, column: ColumnsOf<T, unknown>): Promise<boolean> {
  const r = await (db as Untyped)
    .updateTable(table as string)
    .set((eb) => ({ [column]: eb.ref(column) }))
    .where((eb) => matching(eb, key as Record<string, unknown>))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** `DELETE FROM t WHERE column <= before` (rows that ended long enough ago). */
export async function deleteExpired<T extends Table>(db: Kysely<Database>, table: T, column: ColumnsOf<T, number>, before: number): Promise<void> {
  await (db as Untyped)
    .deleteFrom(table as string)
    .where(column as string, '<=', before)
    .execute();
}

/**
 * A periodic sweep without a scheduler: `tick` counts one write and every `every`th runs the
 * sweep. Declare one per module (not per repository instance): repositories are made per
 * transaction by `repos()`, and a per-instance counter would start again at each.
 */
export class Sweeper {
  #count = 0;
  constructor(
    private readonly every: number,
    private readonly sweep: (db: Kysely<Database>, now: number) => Promise<void>,
  ) {}

  async tick(db: Kysely<Database>, now: number): Promise<void> {
    if (++this.#count % this.every === 0) await this.sweep(db, now);
  }

  /** Sweeps now (tests, maintenance). */
  run(db: Kysely<Database>, now: number): Promise<void> {
    return this.sweep(db, now);
  }
}
