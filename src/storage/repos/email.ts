import { type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely';
import { claimWithLease, compareAndSet, deleteExpired, Sweeper } from '../atomic.js';
import type { Dialect } from '../db.js';
import type { Database } from '../schema.js';
import type { EmailOutboxTable, EmailTokensTable } from '../tables/email.js';

export type EmailStatus = 'pending' | 'sending' | 'sent' | 'failed';

export interface EmailRecord {
  id: string;
  tenantId: string;
  userId: string | null;
  recipient: string;
  template: string;
  messageId: string;
  /** The rendered message (JSON) until sent or failed. */
  message: string | null;
  status: EmailStatus;
  attempts: number;
  attemptLimit: number;
  nextAttemptAt: number;
  lastError: string | null;
  transport: string | null;
  createdAt: number;
  updatedAt: number;
  sentAt: number | null;
}

const nOrNull = (v: number | string | null) => (v === null ? null : Number(v));

const outboxRecord = (r: Selectable<EmailOutboxTable>): EmailRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  recipient: r.recipient,
  template: r.template,
  messageId: r.message_id,
  message: r.message,
  status: r.status as EmailStatus,
  attempts: Number(r.attempts),
  attemptLimit: Number(r.attempt_limit),
  nextAttemptAt: Number(r.next_attempt_at),
  lastError: r.last_error,
  transport: r.transport,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  sentAt: nOrNull(r.sent_at),
});

/** The email outbox: written in the causing transaction, claimed with a lease by the sender (src/email/sender.ts). */
export class EmailOutboxRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(
    e: Pick<EmailRecord, 'id' | 'tenantId' | 'userId' | 'recipient' | 'template' | 'messageId' | 'message' | 'attemptLimit'>,
    now: number,
  ): Promise<void> {
    await this.db
      .insertInto('email_outbox')
      .values({
        id: e.id,
        tenant_id: e.tenantId,
        user_id: e.userId,
        recipient: e.recipient,
        template: e.template,
        message_id: e.messageId,
        message: e.message,
        status: 'pending',
        attempts: 0,
        attempt_limit: e.attemptLimit,
        next_attempt_at: now,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        transport: null,
        created_at: now,
        updated_at: now,
        sent_at: null,
      })
      .execute();
  }

  /** Claims due messages: pending ones whose time has come and ones whose sender's lease ran out (it died mid-send). */
  async claim(q: { owner: string; now: number; leaseMs: number; limit: number }): Promise<EmailRecord[]> {
    const { now } = q;
    const due = (eb: ExpressionBuilder<Database, 'email_outbox'>) =>
      eb.or([eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', now)]), eb.and([eb('status', '=', 'sending'), eb('lease_until', '<=', now)])]);
    const candidates = this.db.selectFrom('email_outbox').select('id').where(due).orderBy('next_attempt_at').limit(q.limit);
    const rows = await claimWithLease(this.db, this.dialect, 'email_outbox', {
      candidates,
      due,
      owner: q.owner,
      leaseUntil: now + q.leaseMs,
      set: { status: 'sending', updated_at: now },
    });
    return rows.map(outboxRecord);
  }

  /** Gives a claimed message back untouched (the sender stopped before sending it). */
  async release(id: string, owner: string, now: number): Promise<void> {
    await compareAndSet(this.db, 'email_outbox', {
      key: { id },
      seen: { lease_owner: owner, status: 'sending' },
      set: { status: 'pending', lease_owner: null, lease_until: null, updated_at: now },
    });
  }

  /**
   * Records an attempt while this sender still holds the lease. Sent or failed: the rendered
   * message is dropped (only recipient, template, status and Message-ID remain).
   */
  async finish(
    id: string,
    owner: string,
    next: { status: EmailStatus; nextAttemptAt: number; error: string | null; transport: string | null },
    now: number,
  ): Promise<boolean> {
    const final = next.status === 'sent' || next.status === 'failed';
    return compareAndSet(this.db, 'email_outbox', {
      key: { id },
      seen: { lease_owner: owner, status: 'sending' },
      set: {
        status: next.status,
        attempts: sql<number>`attempts + 1`,
        next_attempt_at: next.nextAttemptAt,
        lease_owner: null,
        lease_until: null,
        last_error: next.error,
        updated_at: now,
        ...(final ? { message: null, transport: next.transport } : {}),
        ...(next.status === 'sent' ? { sent_at: now } : {}),
      },
    });
  }

  async find(tenantId: string, id: string): Promise<EmailRecord | undefined> {
    const row = await this.db
      .selectFrom('email_outbox')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return row && outboxRecord(row);
  }

  /** Newest first. */
  async list(tenantId: string, before: string | undefined, limit: number): Promise<EmailRecord[]> {
    let q = this.db.selectFrom('email_outbox').selectAll().where('tenant_id', '=', tenantId);
    if (before) q = q.where('id', '<', before);
    return (await q.orderBy('id', 'desc').limit(limit).execute()).map(outboxRecord);
  }
}

export interface EmailTokenRecord {
  id: string;
  tenantId: string;
  userId: string;
  purpose: string;
  kind: 'link' | 'code';
  email: string;
  failedAttempts: number;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

const tokenRecord = (r: Selectable<EmailTokensTable>): EmailTokenRecord & { secretHash: string } => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  purpose: r.purpose,
  kind: r.kind as 'link' | 'code',
  email: r.email,
  failedAttempts: Number(r.failed_attempts),
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  consumedAt: nOrNull(r.consumed_at),
  secretHash: r.secret_hash,
});

/** Every this many new tokens, those expired for a day are deleted. */
const tokenSweeper = new Sweeper(100, (db, now) => deleteExpired(db, 'email_tokens', 'expires_at', now - 24 * 3600_000));

/** The secrets email links and codes carry, stored only as SHA-256. Single-use by consume-once. */
export class EmailTokenRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(t: Omit<EmailTokenRecord, 'failedAttempts' | 'consumedAt'> & { secretHash: string }): Promise<void> {
    await tokenSweeper.tick(this.db, t.createdAt);
    await this.db
      .insertInto('email_tokens')
      .values({
        id: t.id,
        tenant_id: t.tenantId,
        user_id: t.userId,
        purpose: t.purpose,
        kind: t.kind,
        secret_hash: t.secretHash,
        email: t.email,
        failed_attempts: 0,
        created_at: t.createdAt,
        expires_at: t.expiresAt,
        consumed_at: null,
      })
      .execute();
  }

  async findBySecret(tenantId: string, secretHash: string): Promise<(EmailTokenRecord & { secretHash: string }) | undefined> {
    const row = await this.db
      .selectFrom('email_tokens')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, secret_hash: secretHash }))
      .executeTakeFirst();
    return row && tokenRecord(row);
  }

  /** The newest unconsumed, unexpired code of a user for a purpose. */
  async liveCode(tenantId: string, userId: string, purpose: string, now: number): Promise<(EmailTokenRecord & { secretHash: string }) | undefined> {
    const row = await this.db
      .selectFrom('email_tokens')
      .selectAll()
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('user_id', '=', userId), eb('purpose', '=', purpose), eb('kind', '=', 'code')]))
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    return row && tokenRecord(row);
  }

  /** Consume-once: true for exactly one caller, only while unconsumed and unexpired. */
  async consume(id: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('email_tokens')
      .set({ consumed_at: now })
      .where('id', '=', id)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Every still-usable secret of a user for a purpose ends (a newer one was sent, or one was used). */
  async consumeAll(tenantId: string, userId: string, purpose: string, now: number): Promise<void> {
    await this.db
      .updateTable('email_tokens')
      .set({ consumed_at: now })
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('user_id', '=', userId), eb('purpose', '=', purpose)]))
      .where('consumed_at', 'is', null)
      .execute();
  }

  /** Counts a wrong code; at `max` the code is used up. */
  async failCode(id: string, max: number, now: number): Promise<void> {
    await this.db
      .updateTable('email_tokens')
      .set({
        failed_attempts: sql<number>`failed_attempts + 1`,
        consumed_at: sql<number | null>`case when failed_attempts + 1 >= ${max} then ${now} else consumed_at end`,
      })
      .where('id', '=', id)
      .execute();
  }
}

export interface DevMessage {
  id: string;
  tenantId: string;
  outboxId: string;
  recipient: string;
  template: string;
  messageId: string;
  subject: string;
  text: string;
  html: string;
  createdAt: number;
}

/** The embedded transport's mailbox (no SMTP configured): messages stay here for the console and the log. */
export class EmailDevMailboxRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Idempotent on the outbox id: a message delivered twice (a lease that ran out mid-send) lands once. */
  async put(m: DevMessage): Promise<void> {
    await this.db
      .insertInto('email_dev_mailbox')
      .values({
        id: m.id,
        tenant_id: m.tenantId,
        outbox_id: m.outboxId,
        recipient: m.recipient,
        template: m.template,
        message_id: m.messageId,
        subject: m.subject,
        text_body: m.text,
        html_body: m.html,
        created_at: m.createdAt,
      })
      .onConflict((oc) => oc.column('outbox_id').doNothing())
      .execute();
  }

  async find(tenantId: string, outboxId: string): Promise<DevMessage | undefined> {
    const r = await this.db
      .selectFrom('email_dev_mailbox')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, outbox_id: outboxId }))
      .executeTakeFirst();
    return (
      r && {
        id: r.id,
        tenantId: r.tenant_id,
        outboxId: r.outbox_id,
        recipient: r.recipient,
        template: r.template,
        messageId: r.message_id,
        subject: r.subject,
        text: r.text_body,
        html: r.html_body,
        createdAt: Number(r.created_at),
      }
    );
  }
}

export interface EmailSettingsRecord {
  fromAddress: string | null;
  fromName: string | null;
  replyTo: string | null;
  updatedAt: number;
}

/** A tenant's sender (`from`, reply-to); no row: the defaults. */
export class EmailSettingsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(tenantId: string): Promise<EmailSettingsRecord | undefined> {
    const r = await this.db.selectFrom('email_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    return r && { fromAddress: r.from_address, fromName: r.from_name, replyTo: r.reply_to, updatedAt: Number(r.updated_at) };
  }

  async put(tenantId: string, s: EmailSettingsRecord): Promise<void> {
    const values = { from_address: s.fromAddress, from_name: s.fromName, reply_to: s.replyTo, updated_at: s.updatedAt };
    await this.db
      .insertInto('email_settings')
      .values({ tenant_id: tenantId, ...values })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
      .execute();
  }
}
