/**
 * Imports and exports as jobs (docs/import-export.md). A job's row (`transfer_jobs`) is its
 * state: an import (`imp_…`) applies its rows in batches, one transaction each, and moves its
 * heartbeat on after every batch; an export (`exp_…`) writes the tenant as JSONL, stored under
 * envelope encryption until downloaded. A job whose process died (no heartbeat for STALE_MS) is
 * marked failed (`interrupted`) the next time anyone looks: it is not resumed, and running the
 * same file again is safe (imports are idempotent by external id).
 */
import type { Actor } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { Envelope } from '../kernel/crypto/envelope.js';
import { errors } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { Db, Executor } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import type { RejectedRow, TransferJobRecord, TransferKind } from '../storage/repos/transfers.js';
import { type PasswordSetBy, passwordTag } from '../storage/repos/users.js';
import type { FirebaseHashConfig } from '../users/imported-hashes.js';
import { type ImportFormat, ImportFileError, type ImportItem, type MemberItem, type OrganizationItem, parseImport, type UserItem } from './parse.js';

/** Rows per transaction. */
export const BATCH_SIZE = 500;
/** A running job whose heartbeat is older than this was interrupted. */
export const STALE_MS = 2 * 60_000;
/** At most this many rejected rows are kept in a report (the counts stay exact). */
export const MAX_REPORT_ROWS = 10_000;

export interface ImportRequest {
  format: ImportFormat;
  /** Names the system the external ids come from (default: the format; `jsonl` and `csv` share `keyhall`). */
  source?: string;
  dryRun: boolean;
  hashConfig?: FirebaseHashConfig;
  allowLegacySha: boolean;
}

export interface ImportCounts {
  rows: number;
  created: number;
  updated: number;
  rejected: number;
  skipped: number;
  organizations_created: number;
  organizations_updated: number;
  memberships: number;
  [k: string]: number;
}

export interface TransferDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  envelope: Envelope;
  /** Whether the actor holds every permission (asked of the management API). */
  holdsEveryPermission: (tenantId: string, actor: Actor) => Promise<boolean>;
  /** How long a finished export is kept (KEYHALL_EXPORT_TTL_SECONDS); default 24 h. */
  exportTtlMs?: number;
}

export const DEFAULT_EXPORT_TTL_MS = 24 * 3600_000;

type Outcome =
  | { kind: 'user'; created: boolean; memberships: number; orgsCreated: number }
  | { kind: 'organization'; created: boolean }
  | { kind: 'member' }
  | { kind: 'skipped' }
  | { kind: 'rejected'; reason: string; detail?: string };

const emptyCounts = (): ImportCounts => ({
  rows: 0,
  created: 0,
  updated: 0,
  rejected: 0,
  skipped: 0,
  organizations_created: 0,
  organizations_updated: 0,
  memberships: 0,
});

const sourceOf = (r: ImportRequest) => r.source ?? (r.format === 'jsonl' || r.format === 'csv' ? 'keyhall' : r.format);

/** What an import or export run keeps between its batches (dry runs remember what they would have created). */
class RunState {
  /** email → external id of the user who has it in this file. */
  readonly emails = new Map<string, string>();
  /** Dry run: external ids that would have been created. */
  readonly dryUsers = new Set<string>();
  readonly dryOrgs = new Set<string>();
  constructor(
    /** Whether the job's actor holds every permission (recorded with each password it sets). */
    readonly everyPermission: boolean,
  ) {}
}

export class TransferService {
  readonly #running = new Set<Promise<unknown>>();

  constructor(private readonly deps: TransferDeps) {}

  /** Resolves once every job this process started has finished (the server waits for it at close). */
  async settle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  get #exportTtl(): number {
    return this.deps.exportTtlMs ?? DEFAULT_EXPORT_TTL_MS;
  }

  /** Deletes the exports that expired (also done every 20th new job). */
  sweepExpired(): Promise<void> {
    return this.#repos().transferJobs.sweepExpired(this.deps.clock.now() - this.#exportTtl);
  }

  #repos(trx?: Executor) {
    return repos(trx ?? this.deps.db.kysely, this.deps.db.dialect);
  }

  async #newJob(tenantId: string, actor: Actor, kind: TransferKind, format: string, o: { dryRun: boolean; includeSecrets: boolean }) {
    const now = this.deps.clock.now();
    const job: TransferJobRecord = {
      id: newId(kind === 'import' ? 'imp' : 'exp', now),
      tenantId,
      kind,
      status: 'running',
      format,
      dryRun: o.dryRun,
      includeSecrets: o.includeSecrets,
      counts: {},
      report: [],
      error: null,
      outputEnc: null,
      actor: { type: actor.type, id: actor.id },
      createdAt: now,
      heartbeatAt: now,
      finishedAt: null,
    };
    await this.#repos().transferJobs.insert(job, now - this.#exportTtl);
    return job;
  }

  /** Runs `work` in the background; whatever it throws marks the job failed. */
  #background(job: TransferJobRecord, work: () => Promise<void>): void {
    const p = work()
      .catch((err: unknown) => this.#fail(job, err))
      .catch(() => undefined)
      .finally(() => this.#running.delete(p));
    this.#running.add(p);
  }

  async #fail(job: TransferJobRecord, err: unknown): Promise<void> {
    const reason = err instanceof ImportFileError ? err.reason : 'internal_error';
    const detail = err instanceof ImportFileError ? err.message : 'the job stopped on an unexpected error';
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const now = this.deps.clock.now();
      if (await this.#repos(trx).transferJobs.updateRunning(job.tenantId, job.id, { status: 'failed', error: `${reason}: ${detail}`, finishedAt: now }))
        if (job.kind === 'import')
          await this.deps.events.record(trx, {
            tenantId: job.tenantId,
            type: 'import.failed',
            organizationId: null,
            actor: job.actor as Actor,
            data: { import_id: job.id, reason },
          });
    });
  }

  /** Starts an import (POST /v1/imports): the job as created; it runs in the background. */
  async startImport(tenantId: string, actor: Actor, data: Buffer, req: ImportRequest): Promise<TransferJobRecord> {
    const job = await this.#newJob(tenantId, actor, 'import', req.format, { dryRun: req.dryRun, includeSecrets: false });
    this.#background(job, () => this.#runImport(job, data, req));
    return job;
  }

  /** Runs an import to its end (the CLI): the finished job. `progress` is told after each batch. */
  async importNow(tenantId: string, actor: Actor, data: Buffer, req: ImportRequest, progress?: (done: number, total: number) => void) {
    const job = await this.#newJob(tenantId, actor, 'import', req.format, { dryRun: req.dryRun, includeSecrets: false });
    try {
      await this.#runImport(job, data, req, progress);
    } catch (err) {
      await this.#fail(job, err);
    }
    return this.get(tenantId, 'import', job.id);
  }

  /** A job; a running one whose process died is marked failed first. 404 when unknown. */
  async get(tenantId: string, kind: TransferKind, id: string): Promise<TransferJobRecord> {
    const now = this.deps.clock.now();
    await this.#repos().transferJobs.failStale(tenantId, now - STALE_MS, now);
    const job = await this.#repos().transferJobs.find(tenantId, kind, id);
    // An expired export is gone even before the sweep deletes its row.
    const expired = kind === 'export' && job?.finishedAt != null && job.finishedAt <= now - this.#exportTtl;
    if (!job || expired) throw errors.notFound(`${kind} not found`);
    return job;
  }

  async #runImport(job: TransferJobRecord, data: Buffer, req: ImportRequest, progress?: (done: number, total: number) => void) {
    const rows = [...parseImport(req.format, data, { hashConfig: req.hashConfig, allowLegacySha: req.allowLegacySha })];
    const counts = emptyCounts();
    const report: RejectedRow[] = [];
    const state = new RunState(await this.deps.holdsEveryPermission(job.tenantId, job.actor as Actor));
    const reject = (row: number, r: { reason: string; detail?: string; externalId?: string; email?: string }) => {
      counts.rejected += 1;
      if (report.length < MAX_REPORT_ROWS)
        report.push({
          row,
          reason: r.reason,
          ...(r.detail ? { detail: r.detail } : {}),
          ...(r.externalId ? { external_id: r.externalId } : {}),
          ...(r.email ? { email: r.email } : {}),
        });
    };
    counts.rows = rows.length;
    for (let start = 0; start < rows.length; start += BATCH_SIZE) {
      const batch = rows.slice(start, start + BATCH_SIZE);
      const ready = batch.flatMap((r) => ('item' in r ? [{ row: r.row, item: r.item }] : (reject(r.row, r.rejected), [])));
      let outcomes: Outcome[];
      try {
        outcomes = await this.#applyBatch(job, req, state, ready);
      } catch {
        // One row the checks did not foresee (a slug or email taken meanwhile): each row again on
        // its own, so only that one is rejected.
        outcomes = [];
        for (const r of ready) {
          try {
            outcomes.push(...(await this.#applyBatch(job, req, state, [r])));
          } catch {
            outcomes.push({ kind: 'rejected', reason: 'conflict', detail: 'the row conflicts with existing data (an email or slug already taken)' });
          }
        }
      }
      for (const [i, o] of outcomes.entries()) {
        const r = ready[i]!;
        if (o.kind === 'rejected') {
          const who = r.item.type === 'user' ? { externalId: r.item.externalId, email: r.item.email } : {};
          reject(r.row, { reason: o.reason, detail: o.detail, ...who });
        } else if (o.kind === 'user') {
          counts[o.created ? 'created' : 'updated'] += 1;
          counts.memberships += o.memberships;
          counts.organizations_created += o.orgsCreated;
        } else if (o.kind === 'organization') counts[o.created ? 'organizations_created' : 'organizations_updated'] += 1;
        else if (o.kind === 'member') counts.memberships += 1;
        else counts.skipped += 1;
      }
      progress?.(Math.min(start + BATCH_SIZE, rows.length), rows.length);
      await this.#repos().transferJobs.updateRunning(job.tenantId, job.id, { counts, report, heartbeatAt: this.deps.clock.now() });
    }
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const now = this.deps.clock.now();
      await this.#repos(trx).transferJobs.updateRunning(job.tenantId, job.id, { status: 'succeeded', counts, report, heartbeatAt: now, finishedAt: now });
      await this.deps.events.record(trx, {
        tenantId: job.tenantId,
        type: 'import.completed',
        organizationId: null,
        actor: job.actor as Actor,
        data: { import_id: job.id, format: req.format, dry_run: req.dryRun, counts },
      });
    });
  }

  /** One batch in one transaction (a dry run reads only). The outcomes, in order. */
  async #applyBatch(job: TransferJobRecord, req: ImportRequest, state: RunState, rows: Array<{ row: number; item: ImportItem }>): Promise<Outcome[]> {
    const run = async (trx: Executor) => {
      const out: Outcome[] = [];
      for (const r of rows) out.push(await this.#apply(trx, job, req, state, r.item));
      return out;
    };
    if (req.dryRun) return run(this.deps.db.kysely);
    return this.deps.events.transaction(this.deps.db.kysely, run);
  }

  #apply(trx: Executor, job: TransferJobRecord, req: ImportRequest, state: RunState, item: ImportItem): Promise<Outcome> {
    switch (item.type) {
      case 'user':
        return this.#applyUser(trx, job, req, state, item);
      case 'organization':
        return this.#applyOrganization(trx, job, req, state, item).then((o) => ({ kind: 'organization', created: o.created }));
      case 'member':
        return this.#applyMember(trx, job, req, state, item);
      case 'skipped':
        return Promise.resolve({ kind: 'skipped' });
    }
  }

  async #applyUser(trx: Executor, job: TransferJobRecord, req: ImportRequest, state: RunState, item: UserItem): Promise<Outcome> {
    const r = this.#repos(trx);
    const source = sourceOf(req);
    const tenantId = job.tenantId;
    const seen = state.emails.get(item.email);
    if (seen !== undefined && seen !== item.externalId)
      return { kind: 'rejected', reason: 'duplicate_email', detail: 'another row of the file has this email' };
    const mapped = await r.importExternalIds.find(tenantId, source, 'user', item.externalId);
    const existing = mapped === undefined ? undefined : await r.users.find(tenantId, mapped);
    const byEmail = await r.users.findByEmail(tenantId, item.email);
    if (byEmail && byEmail.id !== existing?.id)
      return { kind: 'rejected', reason: 'duplicate_email', detail: 'a user with this email already exists (not imported from this id)' };
    state.emails.set(item.email, item.externalId);
    const now = this.deps.clock.now();
    const created = !existing && !state.dryUsers.has(item.externalId);
    let userId = existing?.id;
    const setBy = (hash: string): PasswordSetBy => ({
      type: job.actor.type as Actor['type'],
      id: job.actor.id,
      every_permission: state.everyPermission,
      hash_tag: passwordTag(hash),
    });
    if (existing) {
      const fields = [
        ...(existing.email !== item.email ? ['email'] : []),
        ...(existing.name !== item.name ? ['name'] : []),
        ...(existing.emailVerified !== item.emailVerified ? ['email_verified'] : []),
        ...(item.passwordHash !== undefined && existing.passwordHash !== item.passwordHash ? ['password'] : []),
      ];
      // As PATCH /v1/users: how a tenant administrator signs in changes only by an actor holding every permission.
      if (!state.everyPermission && fields.some((f) => f === 'email' || f === 'password')) {
        await r.users.lock(tenantId, existing.id, this.deps.db.dialect);
        if (await r.tenantAdmins.isAdmin(tenantId, existing.id))
          return { kind: 'rejected', reason: 'insufficient_scope', detail: "changing a tenant administrator's email or password needs every permission" };
      }
      if (!req.dryRun && fields.length > 0) {
        await r.users.update(
          tenantId,
          existing.id,
          {
            email: item.email,
            name: item.name,
            emailVerified: item.emailVerified,
            ...(fields.includes('password') ? { passwordHash: item.passwordHash, passwordSetBy: setBy(item.passwordHash!) } : {}),
          },
          now,
        );
        await this.deps.events.record(trx, {
          tenantId,
          type: 'user.updated',
          organizationId: null,
          actor: job.actor as Actor,
          data: { user_id: existing.id, fields, import_id: job.id },
        });
      }
    } else if (req.dryRun) state.dryUsers.add(item.externalId);
    else {
      userId = newId('user', now);
      await r.users.insert({
        id: userId,
        tenantId,
        email: item.email,
        name: item.name,
        emailVerified: item.emailVerified,
        passwordHash: item.passwordHash ?? null,
        passwordSetBy: item.passwordHash === undefined ? null : setBy(item.passwordHash),
        createdAt: now,
        updatedAt: now,
      });
      await r.importExternalIds.set(tenantId, source, 'user', item.externalId, userId, now);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'user.created',
        organizationId: null,
        actor: job.actor as Actor,
        data: { user_id: userId, import_id: job.id },
      });
    }
    let memberships = 0;
    let orgsCreated = 0;
    for (const o of item.organizations) {
      const org = await this.#applyOrganization(trx, job, req, state, { type: 'organization', externalId: o.externalId, name: o.name, slug: o.slug }, false);
      if (org.created) orgsCreated += 1;
      if (userId !== undefined && org.id !== undefined) await this.#membership(trx, job, org.id, userId, o.role);
      memberships += 1;
    }
    return { kind: 'user', created, memberships, orgsCreated };
  }

  async #applyOrganization(
    trx: Executor,
    job: TransferJobRecord,
    req: ImportRequest,
    state: RunState,
    item: OrganizationItem,
    update = true,
  ): Promise<{ created: boolean; id?: string }> {
    const r = this.#repos(trx);
    const source = sourceOf(req);
    const mapped = await r.importExternalIds.find(job.tenantId, source, 'organization', item.externalId);
    const existing = mapped === undefined ? undefined : await r.organizations.find(job.tenantId, mapped);
    const now = this.deps.clock.now();
    if (req.dryRun) {
      const created = !existing && !state.dryOrgs.has(item.externalId);
      state.dryOrgs.add(item.externalId);
      return { created, id: existing?.id };
    }
    if (existing) {
      if (update) await r.organizations.update(job.tenantId, existing.id, { name: item.name, slug: item.slug }, now);
      return { created: false, id: existing.id };
    }
    const id = newId('org', now);
    await r.organizations.insert({
      id,
      tenantId: job.tenantId,
      name: item.name,
      slug: item.slug,
      domain: null,
      did: null,
      status: 'active',
      brandLogoUrl: null,
      brandPrimaryColor: null,
      brandDisplayName: null,
      webauthnAaguidAllowlist: null,
      domainVerifiedAt: null,
      ssoRequired: false,
      createdAt: now,
      updatedAt: now,
    });
    await r.importExternalIds.set(job.tenantId, source, 'organization', item.externalId, id, now);
    await this.deps.events.record(trx, {
      tenantId: job.tenantId,
      type: 'organization.created',
      organizationId: id,
      actor: job.actor as Actor,
      data: { organization_id: id, import_id: job.id },
    });
    return { created: true, id };
  }

  async #applyMember(trx: Executor, job: TransferJobRecord, req: ImportRequest, state: RunState, item: MemberItem): Promise<Outcome> {
    const r = this.#repos(trx);
    const source = sourceOf(req);
    const orgId = await r.importExternalIds.find(job.tenantId, source, 'organization', item.organizationExternalId);
    const userId = await r.importExternalIds.find(job.tenantId, source, 'user', item.userExternalId);
    const orgKnown = orgId !== undefined || state.dryOrgs.has(item.organizationExternalId);
    const userKnown = userId !== undefined || state.dryUsers.has(item.userExternalId);
    if (!orgKnown || !userKnown) return { kind: 'rejected', reason: 'unknown_reference', detail: 'the member names an organization or user not imported' };
    if (!req.dryRun && orgId !== undefined && userId !== undefined) await this.#membership(trx, job, orgId, userId, item.role);
    return { kind: 'member' };
  }

  async #membership(trx: Executor, job: TransferJobRecord, orgId: string, userId: string, role: string): Promise<void> {
    const r = this.#repos(trx);
    const now = this.deps.clock.now();
    const existing = await r.members.find(job.tenantId, orgId, userId);
    if (existing) {
      if (existing.role !== role) await r.members.setRole(job.tenantId, orgId, userId, existing.role, role, now);
      return;
    }
    await r.members.insert({ tenantId: job.tenantId, organizationId: orgId, userId, role, createdAt: now, updatedAt: now });
    await this.deps.events.record(trx, {
      tenantId: job.tenantId,
      type: 'member.added',
      organizationId: orgId,
      actor: job.actor as Actor,
      data: { organization_id: orgId, user_id: userId, role },
    });
  }

  /**
   * Starts an export (POST /v1/exports). Password hashes only with `includeSecrets`, which needs
   * an actor holding every permission (403 insufficient_scope otherwise).
   */
  async startExport(tenantId: string, actor: Actor, includeSecrets: boolean): Promise<TransferJobRecord> {
    if (includeSecrets && !(await this.deps.holdsEveryPermission(tenantId, actor)))
      throw errors.insufficientScope('include_secrets needs a key holding every permission');
    const job = await this.#newJob(tenantId, actor, 'export', 'jsonl', { dryRun: false, includeSecrets });
    this.#background(job, async () => {
      await this.#finishExport(job, await this.exportLines(tenantId, includeSecrets));
    });
    return job;
  }

  /** Exports now (the CLI, whose operator holds the database): the JSONL, and records the job. */
  async exportNow(tenantId: string, actor: Actor, includeSecrets: boolean): Promise<string> {
    const job = await this.#newJob(tenantId, actor, 'export', 'jsonl', { dryRun: false, includeSecrets });
    const text = await this.exportLines(tenantId, includeSecrets);
    await this.#finishExport(job, text, false);
    return text;
  }

  async #finishExport(job: TransferJobRecord, text: string, keep = true): Promise<void> {
    const counts: Record<string, number> = {};
    for (const line of text.split('\n')) {
      const type = line && (JSON.parse(line) as { type: string }).type;
      if (type) counts[type] = (counts[type] ?? 0) + 1;
    }
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const now = this.deps.clock.now();
      await this.#repos(trx).transferJobs.updateRunning(job.tenantId, job.id, {
        status: 'succeeded',
        counts,
        outputEnc: keep ? this.deps.envelope.encrypt(text, `transfer_job:${job.id}`) : null,
        heartbeatAt: now,
        finishedAt: now,
      });
      await this.deps.events.record(trx, {
        tenantId: job.tenantId,
        type: 'export.completed',
        organizationId: null,
        actor: job.actor as Actor,
        data: { export_id: job.id, include_secrets: job.includeSecrets, counts },
      });
    });
  }

  /** A finished export's JSONL (404 until it has succeeded). */
  async download(tenantId: string, id: string): Promise<string> {
    const job = await this.get(tenantId, 'export', id);
    if (job.status !== 'succeeded' || job.outputEnc === null) throw errors.notFound('the export has no file (yet)');
    return this.deps.envelope.decrypt(job.outputEnc, `transfer_job:${job.id}`);
  }

  /**
   * The tenant as JSONL: a header, organizations, users (with `password_hash` as stored only when
   * `includeSecrets`), members, clients (no secrets) and resource servers.
   */
  async exportLines(tenantId: string, includeSecrets: boolean): Promise<string> {
    const r = this.#repos();
    const out: string[] = [];
    const put = (o: Record<string, unknown>) => out.push(JSON.stringify(o));
    put({ type: 'header', format: 'keyhall-export', version: 1, exported_at: new Date(this.deps.clock.now()).toISOString(), include_secrets: includeSecrets });
    const orgIds: string[] = [];
    for (let after: string | undefined; ;) {
      const page = await r.organizations.list(tenantId, after, 500);
      for (const o of page) {
        orgIds.push(o.id);
        put({ type: 'organization', id: o.id, name: o.name, slug: o.slug, domain: o.domain, created_at: new Date(o.createdAt).toISOString() });
      }
      if (page.length < 500) break;
      after = page.at(-1)!.id;
    }
    for (let after: string | undefined; ;) {
      const page = await r.users.list(tenantId, after, 500);
      for (const u of page)
        put({
          type: 'user',
          id: u.id,
          email: u.email,
          email_verified: u.emailVerified,
          name: u.name,
          created_at: new Date(u.createdAt).toISOString(),
          ...(includeSecrets && u.passwordHash !== null ? { password_hash: u.passwordHash } : {}),
        });
      if (page.length < 500) break;
      after = page.at(-1)!.id;
    }
    for (const orgId of orgIds)
      for (const m of await r.members.listByOrganization(tenantId, orgId)) put({ type: 'member', organization_id: orgId, user_id: m.userId, role: m.role });
    for (let after: string | undefined; ;) {
      const page = await r.oauthClients.list(tenantId, { after, limit: 500 });
      for (const c of page)
        put({
          type: 'client',
          client_id: c.id,
          client_name: c.clientName,
          token_endpoint_auth_method: c.authMethod,
          grant_types: c.grantTypes,
          redirect_uris: c.redirectUris,
          scopes: c.scopes,
          allowed_resources: c.allowedResources,
          allowed_origins: c.allowedOrigins,
          jwks_uri: c.jwksUri,
          jwks: c.jwks,
          dpop_bound_access_tokens: c.dpopBound,
        });
      if (page.length < 500) break;
      after = page.at(-1)!.id;
    }
    for (let after: string | undefined; ;) {
      const page = await r.resourceServers.list(tenantId, { after, limit: 500 });
      for (const s of page)
        put({
          type: 'resource_server',
          id: s.id,
          name: s.name,
          identifier: s.identifier,
          signing_alg: s.signingAlg,
          access_token_ttl_seconds: s.accessTokenTtlSeconds,
          scopes: s.scopes,
          dpop_required: s.dpopRequired,
        });
      if (page.length < 500) break;
      after = page.at(-1)!.id;
    }
    return `${out.join('\n')}\n`;
  }
}
