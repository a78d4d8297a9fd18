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

export const idOf = (prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}_[0-9a-z]{26}$`), `must be a ${prefix}_ id (${prefix}_ and 26 lower-case letters or digits)`);

export const pageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(64).regex(/^[a-z]+_[0-9a-z]{26}$/, 'must be an id').optional(),
});
export type PageQuery = z.infer<typeof pageQuery>;

/** Cursor page: ask the repository for limit+1 rows to know whether there is more. */
export function page<T>(rows: T[], limit: number, cursorOf: (row: T) => string) {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, next_cursor: rows.length > limit && last ? cursorOf(last) : null };
}

export const iso = (ms: number) => new Date(ms).toISOString();

export const pageResponse = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), next_cursor: z.string().nullable() });

/** The error body of every /v1 response that is not 2xx (docs/errors.md). */
export const errorResponse = z
  .object({ error: z.string(), error_description: z.string().optional() })
  .meta({ id: 'Error', description: 'An error: a machine-readable code and a human-readable description' });
