import type { Kysely } from 'kysely';
import { Sweeper } from '../atomic.js';
import { bool, cast, codec, json } from '../codec.js';
import type { Database } from '../schema.js';

export type TransferKind = 'import' | 'export';
export type TransferStatus = 'running' | 'succeeded' | 'failed';

/** A rejected row of an import: where, which, why (never a hash or a password). */
export interface RejectedRow {
  row: number;
  external_id?: string;
  email?: string;
  reason: string;
  detail?: string;
}

export interface TransferJobRecord {
  id: string;
  tenantId: string;
  kind: TransferKind;
  status: TransferStatus;
  format: string;
  dryRun: boolean;
  includeSecrets: boolean;
  counts: Record<string, number>;
  report: RejectedRow[];
  error: string | null;
  outputEnc: string | null;
  actor: { type: string; id: string | null };
  createdAt: number;
  heartbeatAt: number;
  finishedAt: number | null;
}

const stored = codec<TransferJobRecord>()('transfer_jobs', {
  id: true,
  tenantId: true,
  kind: cast<TransferKind>(),
  status: cast<TransferStatus>(),
  format: true,
  dryRun: bool,
  includeSecrets: bool,
  counts: json<Record<string, number>>(),
  report: json<RejectedRow[]>(),
  error: true,
  outputEnc: true,
  actor: json<{ type: string; id: string | null }>(),
  createdAt: true,
  heartbeatAt: true,
  finishedAt: true,
});

const PATCHABLE = ['status', 'counts', 'report', 'error', 'outputEnc', 'heartbeatAt', 'finishedAt'] as const;
export type TransferJobPatch = Partial<Pick<TransferJobRecord, (typeof PATCHABLE)[number]>>;

/** Exports that finished at or before `before`, their encrypted JSONL with them. */
const sweeper = new Sweeper(20, async (db, before) => {
  await db
    .deleteFrom('transfer_jobs')
    .where((eb) => eb.and([eb('kind', '=', 'export'), eb('finished_at', '<=', before)]))
    .execute();
});

/** Import and export jobs: a job's row is its state, so it survives a restart. */
export class TransferJobRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts a job; every 20th insert also sweeps the exports that finished before `expiredBefore`. */
  async insert(j: TransferJobRecord, expiredBefore: number): Promise<void> {
    await this.db.insertInto('transfer_jobs').values(stored.toRow(j)).execute();
    await sweeper.tick(this.db, expiredBefore);
  }

  /** Deletes now the exports that finished at or before `before`. */
  sweepExpired(before: number): Promise<void> {
    return sweeper.run(this.db, before);
  }

  async find(tenantId: string, kind: TransferKind, id: string): Promise<TransferJobRecord | undefined> {
    const row = await this.db
      .selectFrom('transfer_jobs')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, kind, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** Changes a job only while it is running (a job marked failed as interrupted stays failed); whether it did. */
  async updateRunning(tenantId: string, id: string, patch: TransferJobPatch): Promise<boolean> {
    const r = await this.db
      .updateTable('transfer_jobs')
      .set(stored.toPatch(patch, PATCHABLE))
      .where((eb) => eb.and({ tenant_id: tenantId, id, status: 'running' }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Marks failed the running jobs whose heartbeat is older than `staleBefore` (their process died); how many. */
  async failStale(tenantId: string, staleBefore: number, now: number): Promise<number> {
    const r = await this.db
      .updateTable('transfer_jobs')
      .set({ status: 'failed', error: 'interrupted', finished_at: now })
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('status', '=', 'running'), eb('heartbeat_at', '<', staleBefore)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
}

/** The source system's ids of imported users and organizations (idempotent re-runs). */
export class ImportExternalIdRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async find(tenantId: string, source: string, kind: 'user' | 'organization', externalId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('import_external_ids')
      .select('target_id')
      .where((eb) => eb.and({ tenant_id: tenantId, source, kind, external_id: externalId }))
      .executeTakeFirst();
    return row?.target_id;
  }

  /** Points the external id at `targetId` (a mapping whose target was deleted is replaced). */
  async set(tenantId: string, source: string, kind: 'user' | 'organization', externalId: string, targetId: string, now: number): Promise<void> {
    await this.db
      .deleteFrom('import_external_ids')
      .where((eb) => eb.and({ tenant_id: tenantId, source, kind, external_id: externalId }))
      .execute();
    await this.db
      .insertInto('import_external_ids')
      .values({ tenant_id: tenantId, source, kind, external_id: externalId, target_id: targetId, created_at: now })
      .execute();
  }
}
