/**
 * One row↔record mapping per table, written once. A spec names, for every field of the record,
 * how it is stored: `true` (same value, in the snake_case column of the field's name), a
 * conversion (`json`, `jsonOrNull`, `bool`, `words`, `num`, `cast`), optionally in another column
 * (`.in('column')`), or a value `computed` from the row (read only). From it come `toRecord` (for
 * reads), `toRow` (for inserts) and `toPatch` (for updates: only the fields given). Spec and
 * record are checked against the table's Kysely row type: a field naming no column, or a
 * conversion whose stored type is not the column's, does not compile.
 */
import type { Database } from './schema.js';

/** `brandLogoUrl` → `brand_logo_url`, at the type level. */
type Snake<S extends string, Acc extends string = ''> = S extends `${infer C}${infer Rest}`
  ? Snake<Rest, `${Acc}${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}`>
  : Acc;

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** How a record value `V` is stored as a column value `C`, in column `Col` (default: the field's name in snake_case). */
export interface Field<V, C, Col extends string | undefined = undefined> {
  readonly column: Col;
  readonly decode: (stored: C) => V;
  readonly encode: (value: V) => C;
  /** The same conversion, stored in the column `column`. */
  in<N extends string>(column: N): Field<V, C, N>;
}

/** A read-only field derived from the row (not written by `toRow`). */
export interface Computed<V, Row> {
  readonly computed: (row: Row) => V;
}

/** A conversion of its own: `decode` for reads, `encode` for writes. */
export function field<V, C>(decode: (stored: C) => V, encode: (value: V) => C): Field<V, C> {
  const make = <Col extends string | undefined>(column: Col): Field<V, C, Col> => ({ column, decode, encode, in: (c) => make(c) });
  return make(undefined);
}

/** The stored value as it is, in another column (`same<string>().in('scope')`). */
export const same = <T>() =>
  field<T, T>(
    (v) => v,
    (v) => v,
  );
/** A number column read through Number() (counters and versions, whatever the driver returns). */
export const num = field<number, number>(Number, (v) => v);
/** A boolean stored as 0/1. */
export const bool = field<boolean, number>(
  (v) => Number(v) === 1,
  (v) => (v ? 1 : 0),
);
/** A list stored space-separated ('' for none). */
export const words = field<string[], string>(
  (v) => (v ? v.split(' ') : []),
  (v) => v.join(' '),
);
/** A string column whose values are a known union (checked where they are written). */
export const cast = <T extends string>() =>
  field<T, string>(
    (v) => v as T,
    (v) => v,
  );
/** JSON text. */
export const json = <T>() =>
  field<T, string>(
    (v) => JSON.parse(v) as T,
    (v) => JSON.stringify(v),
  );
/** JSON text, or null. */
export const jsonOrNull = <T>() =>
  field<T | null, string | null>(
    (v) => (v ? (JSON.parse(v) as T) : null),
    (v) => (v === null ? null : JSON.stringify(v)),
  );
/** A value derived from the row. */
export const computed = <Row, V>(read: (row: Row) => V): Computed<V, Row> => ({ computed: read });

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** What a record field `K` of type `V` may be specified as, for a table whose rows are `Row`. */
type FieldSpec<Row, K extends string, V> =
  | (Snake<K> extends keyof Row ? (Same<V, Row[Snake<K>]> extends true ? true : never) | Field<V, Row[Snake<K>]> : never)
  | { [C in keyof Row & string]: Field<V, Row[C], C> }[keyof Row & string]
  | Computed<V, Row>;

export type Spec<Row, Rec> = { [K in keyof Rec & string]-?: FieldSpec<Row, K, Rec[K]> };

type ColumnOf<K extends string, F> = F extends { column: infer N extends string } ? N : Snake<K>;

/** The columns a spec writes, with their row types. */
export type RowPart<Row, S> = {
  [K in keyof S & string as S[K] extends Computed<unknown, never> ? never : ColumnOf<K, S[K]>]: Row[ColumnOf<K, S[K]> & keyof Row];
};

type StoredEntry = { key: string; column: string; decode: (v: unknown) => unknown; encode: (v: unknown) => unknown };
type Entry = StoredEntry | { key: string; computed: (row: unknown) => unknown };

export interface Codec<T extends keyof Database, Rec, S> {
  readonly table: T;
  toRecord(row: Database[T]): Rec;
  toRow(record: Rec): RowPart<Database[T], S>;
  /** The defined fields of `patch` (all, or only those in `only`), as columns. */
  toPatch(patch: Partial<Rec>, only?: readonly (keyof Rec)[]): Partial<RowPart<Database[T], S>>;
}

/** `codec<OrganizationRecord>()('organizations', { id: true, tenantId: true, … })`. */
export function codec<Rec>() {
  return <T extends keyof Database, S extends Spec<Database[T], Rec>>(table: T, spec: S): Codec<T, Rec, S> => {
    const entries: Entry[] = Object.entries(spec as Record<string, true | Field<unknown, unknown, string | undefined> | Computed<unknown, unknown>>).map(
      ([key, f]) => {
        if (f === true) return { key, column: snake(key), decode: (v) => v, encode: (v) => v };
        if ('computed' in f) return { key, computed: f.computed };
        return { key, column: f.column ?? snake(key), decode: f.decode, encode: f.encode };
      },
    );
    const stored = entries.filter((e): e is StoredEntry => !('computed' in e));
    const write = (rec: Record<string, unknown>, keep: (key: string) => boolean) => {
      const out: Record<string, unknown> = {};
      for (const e of stored) if (keep(e.key)) out[e.column] = e.encode(rec[e.key]);
      return out;
    };
    return {
      table,
      toRecord: (row) => {
        const r = row as unknown as Record<string, unknown>;
        return Object.fromEntries(entries.map((e) => [e.key, 'computed' in e ? e.computed(row) : e.decode(r[e.column])])) as Rec;
      },
      toRow: (record) => write(record as Record<string, unknown>, () => true) as RowPart<Database[T], S>,
      toPatch: (patch, only) => {
        const p = patch as Record<string, unknown>;
        return write(p, (k) => p[k] !== undefined && (!only || only.includes(k as keyof Rec))) as Partial<RowPart<Database[T], S>>;
      },
    };
  };
}

/** Where a row of an outbox (webhook deliveries, logout deliveries) stands: claimed with a lease, retried until its limit. */
export type OutboxStatus = 'pending' | 'delivering' | 'delivered' | 'failed';

/** The fields every outbox row shares, after its own. */
export interface OutboxState {
  status: OutboxStatus;
  attempts: number;
  attemptLimit: number;
  nextAttemptAt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Their codec entries: the same columns in every outbox table. */
export const outboxState = {
  status: cast<OutboxStatus>(),
  attempts: num,
  attemptLimit: num,
  nextAttemptAt: true,
  leaseOwner: true,
  leaseUntil: true,
  lastStatusCode: true,
  lastError: true,
  createdAt: true,
  updatedAt: true,
} as const;
