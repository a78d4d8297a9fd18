import { z } from 'zod';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { Db, Executor } from '../storage/db.js';
import { type Repos, repos } from '../storage/repos/index.js';

/** What every management service needs. */
export interface ManagementDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
}

/** The repositories over the root database, or over `trx` inside a transaction. */
export const reposOf = (deps: ManagementDeps, trx?: Executor): Repos => repos(trx ?? deps.db.kysely, deps.db.dialect);

/**
 * A prefixed id in a path, query or body. Only the prefix is checked: a well-formed id that
 * names nothing (`org_abc`) is the service's 404, not a format error.
 */
export const idOf = (prefix: string) =>
  z
    .string()
    .max(64)
    .regex(new RegExp(`^${prefix}_[0-9a-z]+$`), `must be an id starting with ${prefix}_`);

/** Every /v1 list: `?limit=` 1..PAGE_LIMIT_MAX, default PAGE_LIMIT_DEFAULT (docs/api.md). */
export const PAGE_LIMIT_DEFAULT = 20;
export const PAGE_LIMIT_MAX = 100;
const LIMIT_RULE = `must be an integer from 1 to ${PAGE_LIMIT_MAX}`;
export const limitParam = z.coerce.number({ error: LIMIT_RULE }).int(LIMIT_RULE).min(1, LIMIT_RULE).max(PAGE_LIMIT_MAX, LIMIT_RULE).default(PAGE_LIMIT_DEFAULT);

/**
 * Cursors are opaque to clients: base64url of `<list>:<key of the last row>`. Binding the list
 * name means a cursor from another list (or anything hand-made) is 400, and the key can change
 * form without breaking clients.
 */
const encodeCursor = (list: string, key: string) => Buffer.from(`${list}:${key}`, 'utf8').toString('base64url');
const CURSOR_KEY = /^[\x21-\x7e]{1,200}$/;

const cursorParam = (list: string) =>
  z
    .string()
    .max(400)
    .transform((value, ctx) => {
      const decoded = /^[A-Za-z0-9_-]+$/.test(value) ? Buffer.from(value, 'base64url').toString('utf8') : '';
      const key = decoded.startsWith(`${list}:`) ? decoded.slice(list.length + 1) : '';
      if (CURSOR_KEY.test(key)) return key;
      ctx.addIssue({ code: 'custom', message: "is not a cursor from this list (pass a page's next_cursor unchanged)" });
      return z.NEVER;
    });

/**
 * One list's paging: the query schema (`limit`, `after` = a previous page's `next_cursor`) and
 * the page builder (the repository is asked for limit+1 rows to know whether there is more).
 */
export function listing(list: string) {
  return {
    query: z.strictObject({ limit: limitParam, after: cursorParam(list).optional() }),
    page<T>(rows: T[], limit: number, keyOf: (row: T) => string): { data: T[]; has_more: boolean; next_cursor: string | null } {
      const data = rows.slice(0, limit);
      const last = data[data.length - 1];
      const has_more = rows.length > limit;
      return { data, has_more, next_cursor: has_more && last !== undefined ? encodeCursor(list, keyOf(last)) : null };
    },
    /** A page of a small list read whole (ordered by key): the same paging, done in memory. */
    pageAll<T>(all: T[], query: { limit: number; after?: string }, keyOf: (row: T) => string) {
      const sorted = [...all].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
      const rows = query.after === undefined ? sorted : sorted.filter((r) => keyOf(r) > query.after!);
      return this.page(rows.slice(0, query.limit + 1), query.limit, keyOf);
    },
  };
}

export const iso = (ms: number) => new Date(ms).toISOString();

/** Every list answers `{data, has_more, next_cursor}`; `next_cursor` is null when `has_more` is false. */
export const pageResponse = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });

/** The error body of every /v1 response that is not 2xx (docs/errors.md). */
export const errorResponse = z
  .object({ error: z.string(), error_description: z.string().optional() })
  .meta({ id: 'Error', description: 'An error: a machine-readable code and a human-readable description' });
