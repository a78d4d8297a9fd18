/**
 * Accounts by email (docs/email.md): the outbox writer (rendered in the recipient's language with
 * the tenant's sender, inserted in the caller's transaction), email verification by link or code,
 * and password reset. Link tokens and codes are stored only as SHA-256; each is single-use.
 */
import { randomInt } from 'node:crypto';
import { AfterAnswer } from '../kernel/after-answer.js';
import type { Actor } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import { safeEqual, sha256Hex } from '../kernel/crypto/hash.js';
import { errors } from '../kernel/errors.js';
import { newId, randomBase64url } from '../kernel/ids.js';
import type { Tenant } from '../kernel/tenancy.js';
import { DEFAULT_BRAND } from '../screens/brand.js';
import { DEFAULT_LOCALE, en, isLocale, type Locale, NO_TENANT_TEXTS, type TenantTexts, translator } from '../screens/i18n/index.js';
import { type Db, type Executor, isUniqueViolation } from '../storage/db.js';
import type { EmailRecord, EmailSettingsRecord } from '../storage/repos/email.js';
import { repos } from '../storage/repos/index.js';
import { passwordTag, type UserRecord } from '../storage/repos/users.js';
import { normalizeEmail } from '../users/emails.js';
import { hashPassword } from '../users/passwords.js';
import type { EmailSender } from './sender.js';
import { type EmailTemplate, renderEmail } from './templates.js';
import type { OutgoingEmail } from './transport.js';

export const VERIFY_LINK_TTL_MS = 24 * 3600_000;
export const VERIFY_CODE_TTL_MS = 10 * 60_000;
export const RESET_LINK_TTL_MS = 3600_000;
/** Wrong codes a verification code survives. */
export const CODE_MAX_FAILURES = 5;
/** Password-reset requests per address and per IP in RESET_WINDOW_MS. */
export const RESET_PER_ADDRESS = 3;
export const RESET_PER_IP = 20;
export const RESET_WINDOW_MS = 15 * 60_000;
/** Address changes a user may ask for in RESET_WINDOW_MS. */
export const CHANGE_PER_USER = 5;
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const LINK_INVALID = 'This link has expired or was already used. Ask for a new one.';
export const CODE_INVALID = 'The code is wrong or has expired. Ask for a new email.';
export const PASSWORD_LENGTH = 'The password must have between 8 and 256 characters.';

export interface EmailSettingsView {
  from_address: string | null;
  from_name: string | null;
  reply_to: string | null;
  /** The sender used when from_address is null. */
  default_from: string;
  /** `smtp` or `dev_mailbox` (nothing is sent: messages are in /v1/email_outbox and the log). */
  transport: 'smtp' | 'dev_mailbox';
  updated_at: string | null;
}

export interface EmailDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  sender: EmailSender;
  /** KEYHALL_EMAIL_FROM */
  defaultFrom?: string;
  /** A write started after its answer failed (logged by the composition root, without the message). */
  onError?: (err: unknown) => void;
}

const iso = (ms: number) => new Date(ms).toISOString();
const hostOnly = (host: string) => host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
/** A display name in an address header: quoted, without the characters that could break out of it. */
const quoted = (name: string) => `"${name.replace(/["\\\r\n]/g, '')}"`;

export class EmailService {
  readonly #afterAnswer: AfterAnswer;

  constructor(private readonly deps: EmailDeps) {
    this.#afterAnswer = new AfterAnswer(() => this.deps.sender.poke(), deps.onError);
  }

  #repos(trx?: Executor) {
    return repos(trx ?? this.deps.db.kysely, this.deps.db.dialect);
  }

  defaultFrom(tenant: Tenant): string {
    return this.deps.defaultFrom ?? `no-reply@${hostOnly(tenant.host)}`;
  }

  async #texts(tenantId: string, trx?: Executor): Promise<TenantTexts> {
    const stored = await this.#repos(trx).pageTexts.get(tenantId);
    if (!stored) return NO_TENANT_TEXTS;
    return { defaultLocale: isLocale(stored.defaultLocale) ? stored.defaultLocale : DEFAULT_LOCALE, overrides: stored.overrides as TenantTexts['overrides'] };
  }

  /**
   * Renders a message and writes it to the outbox inside `trx` (the transaction that causes it):
   * it is sent only if that commits, and then certainly (src/email/sender.ts).
   */
  async enqueue(
    trx: Executor,
    tenant: Tenant,
    m: { userId: string | null; to: string; template: EmailTemplate; link?: string; code?: string; organization?: string; locale?: Locale },
  ): Promise<string> {
    const now = this.deps.clock.now();
    const texts = await this.#texts(tenant.id, trx);
    const settings = await this.#repos(trx).emailSettings.get(tenant.id);
    const brandName = settings?.fromName ?? DEFAULT_BRAND.displayName;
    const rendered = renderEmail(m.template, translator(m.locale ?? texts.defaultLocale, texts), { ...DEFAULT_BRAND, displayName: brandName }, m);
    const id = newId('eml', now);
    const fromAddress = settings?.fromAddress ?? this.defaultFrom(tenant);
    const message: OutgoingEmail = {
      from: `${quoted(brandName)} <${fromAddress}>`,
      replyTo: settings?.replyTo ?? null,
      to: m.to,
      ...rendered,
      messageId: `<${id}@${hostOnly(fromAddress.split('@')[1] ?? tenant.host)}>`,
      ...(m.link ? { link: m.link } : {}),
      ...(m.code ? { code: m.code } : {}),
    };
    await this.#repos(trx).emailOutbox.insert(
      {
        id,
        tenantId: tenant.id,
        userId: m.userId,
        recipient: m.to,
        template: m.template,
        messageId: message.messageId,
        message: JSON.stringify(message),
        attemptLimit: this.deps.sender.attemptLimit,
      },
      now,
    );
    return id;
  }

  // ---------------------------------------------------------------- settings and the outbox

  async settings(tenant: Tenant): Promise<EmailSettingsView> {
    const s = await this.#repos().emailSettings.get(tenant.id);
    return this.#settingsView(tenant, s);
  }

  #settingsView(tenant: Tenant, s: EmailSettingsRecord | undefined): EmailSettingsView {
    return {
      from_address: s?.fromAddress ?? null,
      from_name: s?.fromName ?? null,
      reply_to: s?.replyTo ?? null,
      default_from: this.defaultFrom(tenant),
      transport: this.deps.sender.transport === 'smtp' ? 'smtp' : 'dev_mailbox',
      updated_at: s ? iso(s.updatedAt) : null,
    };
  }

  async putSettings(tenant: Tenant, actor: Actor, input: { from_address: string | null; from_name: string | null; reply_to: string | null }) {
    const now = this.deps.clock.now();
    const next: EmailSettingsRecord = { fromAddress: input.from_address, fromName: input.from_name, replyTo: input.reply_to, updatedAt: now };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = this.#repos(trx);
      const before = await r.emailSettings.get(tenant.id);
      await r.emailSettings.put(tenant.id, next);
      const fields = (['from_address', 'from_name', 'reply_to'] as const).filter(
        (f) => (before ? { from_address: before.fromAddress, from_name: before.fromName, reply_to: before.replyTo }[f] : null) !== input[f],
      );
      await this.deps.events.record(trx, { tenantId: tenant.id, type: 'email_settings.updated', organizationId: null, actor, data: { fields } });
    });
    return this.#settingsView(tenant, next);
  }

  listOutbox(tenantId: string, before: string | undefined, limit: number): Promise<EmailRecord[]> {
    return this.#repos().emailOutbox.list(tenantId, before, limit);
  }

  // ---------------------------------------------------------------- verification

  /** Sends a verification email (link 24 h, code 10 min); earlier ones stop working. */
  async requestVerification(tenant: Tenant, actor: Actor, userId: string): Promise<{ email_id: string; link_expires_at: string; code_expires_at: string }> {
    const now = this.deps.clock.now();
    const user = await this.#repos().users.find(tenant.id, userId);
    if (!user) throw errors.notFound('no such user');
    if (user.emailVerified) throw errors.conflict('the email address is already verified');
    const id = await this.deps.events.transaction(this.deps.db.kysely, (trx) => this.queueVerification(trx, tenant, user));
    this.deps.sender.poke();
    return { email_id: id, link_expires_at: iso(now + VERIFY_LINK_TTL_MS), code_expires_at: iso(now + VERIFY_CODE_TTL_MS) };
  }

  /**
   * A verification email (its link, code and outbox row) written in the caller's transaction (a
   * sign-up, a sign-in the policy stops, an address set by /v1, docs/account.md); earlier links and
   * codes stop working. Returns the outbox id; the caller pokes the sender once it commits.
   */
  async queueVerification(trx: Executor, tenant: Tenant, user: Pick<UserRecord, 'id' | 'email'>, locale?: Locale): Promise<string> {
    const now = this.deps.clock.now();
    const token = `vfy_${randomBase64url(32)}`;
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const codeId = newId('etk', now);
    const r = this.#repos(trx);
    await r.emailTokens.consumeAll(tenant.id, user.id, 'verify_email', now);
    const base = { tenantId: tenant.id, userId: user.id, purpose: 'verify_email', email: user.email, createdAt: now };
    await r.emailTokens.insert({ ...base, id: newId('etk', now), kind: 'link', secretHash: sha256Hex(token), expiresAt: now + VERIFY_LINK_TTL_MS });
    await r.emailTokens.insert({ ...base, id: codeId, kind: 'code', secretHash: sha256Hex(`${codeId}:${code}`), expiresAt: now + VERIFY_CODE_TTL_MS });
    return this.enqueue(trx, tenant, {
      userId: user.id,
      to: user.email,
      template: 'verify_email',
      link: `${tenant.issuer}/verify-email?token=${token}`,
      code,
      ...(locale ? { locale } : {}),
    });
  }

  /** Sends what the outbox holds now (after the transaction that wrote it committed). */
  poke(): void {
    this.deps.sender.poke();
  }

  // ---------------------------------------------------------------- email change by the user (docs/account.md)

  /**
   * The user asks for a new address on /account: a link (24 h) goes to the new address, and the
   * address changes only when it is opened. An address another user holds gets the same answer
   * and nothing is sent (no account enumeration); limited per user (429).
   */
  async requestEmailChange(tenant: Tenant, userId: string, input: string, locale: Locale): Promise<void> {
    const now = this.deps.clock.now();
    const email = normalizeEmail(input);
    if (email.length > 254 || !EMAIL_SHAPE.test(email)) throw errors.invalidRequest(en['error.email_invalid']);
    const user = await this.#repos().users.find(tenant.id, userId);
    if (!user) throw errors.notFound('no such user');
    if (user.email === email) throw errors.invalidRequest(en['error.email_same']);
    const waitMs = await this.#repos().rateLimits.hit(tenant.id, `emailchange:user:${user.id}`, CHANGE_PER_USER, RESET_WINDOW_MS, now);
    if (waitMs > 0) throw errors.tooManyRequests(Math.ceil(waitMs / 1000));
    if (await this.#repos().users.findByEmail(tenant.id, email)) return;
    const token = `chg_${randomBase64url(32)}`;
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = this.#repos(trx);
      await r.emailTokens.consumeAll(tenant.id, user.id, 'email_change', now);
      await r.emailTokens.insert({
        id: newId('etk', now),
        tenantId: tenant.id,
        userId: user.id,
        purpose: 'email_change',
        kind: 'link',
        secretHash: sha256Hex(token),
        email,
        createdAt: now,
        expiresAt: now + VERIFY_LINK_TTL_MS,
      });
      await this.enqueue(trx, tenant, {
        userId: user.id,
        to: email,
        template: 'email_change',
        link: `${tenant.issuer}/account/email/verify?token=${token}`,
        locale,
      });
    });
  }

  async #liveChange(tenantId: string, token: string, trx?: Executor) {
    if (!/^chg_[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const r = this.#repos(trx);
    const row = await r.emailTokens.findBySecret(tenantId, sha256Hex(token));
    if (!row || row.purpose !== 'email_change' || row.consumedAt !== null || row.expiresAt <= this.deps.clock.now()) return undefined;
    const user = await r.users.find(tenantId, row.userId);
    return user ? { row, user } : undefined;
  }

  /** The new address a live change link names (its page shows it; only the POST uses the link). */
  async changeTarget(tenantId: string, token: string): Promise<string | undefined> {
    return (await this.#liveChange(tenantId, token))?.row.email;
  }

  /**
   * The link of an address change, confirmed on its page: the address is replaced (verified: the
   * link proved it), `user.updated` recorded, and the old address told. Refused: a dead link (400
   * invalid_request), an address another user took meanwhile (409 email_taken).
   */
  async completeEmailChange(tenant: Tenant, token: string): Promise<void> {
    try {
      await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const now = this.deps.clock.now();
        const live = await this.#liveChange(tenant.id, token, trx);
        const r = this.#repos(trx);
        if (!live || !(await r.emailTokens.consume(live.row.id, now))) throw errors.invalidRequest(en['error.email_change_invalid']);
        const { user, row } = live;
        const holder = await r.users.findByEmail(tenant.id, row.email);
        if (holder && holder.id !== user.id) throw errors.emailTaken(en['error.email_taken']);
        await r.users.update(tenant.id, user.id, { email: row.email, emailVerified: true }, now);
        await r.emailTokens.consumeAll(tenant.id, user.id, 'verify_email', now);
        const actor: Actor = { type: 'user', id: user.id };
        await this.deps.events.record(trx, {
          tenantId: tenant.id,
          type: 'user.updated',
          organizationId: null,
          actor,
          data: { user_id: user.id, fields: ['email', 'email_verified'], via: 'email_change' },
        });
        await this.enqueue(trx, tenant, { userId: user.id, to: user.email, template: 'email_changed', link: `${tenant.issuer}/account` });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.emailTaken(en['error.email_taken']);
      throw err;
    }
    this.deps.sender.poke();
  }

  /** Whether a link token is live (the page shows its form; only the POST uses it). */
  async linkValid(tenantId: string, token: string, purpose: 'verify_email' | 'password_reset'): Promise<boolean> {
    return (await this.#liveLink(tenantId, token, purpose)) !== undefined;
  }

  async #liveLink(tenantId: string, token: string, purpose: string, trx?: Executor) {
    if (!/^(vfy|rst)_[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const r = this.#repos(trx);
    const row = await r.emailTokens.findBySecret(tenantId, sha256Hex(token));
    if (!row || row.purpose !== purpose || row.kind !== 'link' || row.consumedAt !== null || row.expiresAt <= this.deps.clock.now()) return undefined;
    const user = await r.users.find(tenantId, row.userId);
    // A token is good only for the address it was sent to.
    if (!user || user.email !== row.email) return undefined;
    return { row, user };
  }

  /** The link of a verification email, confirmed on its page. */
  async verifyLink(tenantId: string, token: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const live = await this.#liveLink(tenantId, token, 'verify_email', trx);
      if (!live || !(await this.#repos(trx).emailTokens.consume(live.row.id, this.deps.clock.now()))) throw errors.invalidRequest(LINK_INVALID);
      await this.#markVerified(trx, tenantId, live.user.id, 'link');
    });
  }

  /** The code of a verification email, typed with the address it was sent to. */
  async verifyCode(tenantId: string, emailInput: string, codeInput: string): Promise<void> {
    const now = this.deps.clock.now();
    const user = await this.#repos().users.findByEmail(tenantId, normalizeEmail(emailInput).slice(0, 254));
    const row = user && (await this.#repos().emailTokens.liveCode(tenantId, user.id, 'verify_email', now));
    const code = codeInput.trim();
    if (!user || !row || row.email !== user.email) throw errors.invalidRequest(CODE_INVALID);
    if (!/^\d{6}$/.test(code) || !safeEqual(row.secretHash, sha256Hex(`${row.id}:${code}`))) {
      await this.#repos().emailTokens.failCode(row.id, CODE_MAX_FAILURES, now);
      throw errors.invalidRequest(CODE_INVALID);
    }
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      if (!(await this.#repos(trx).emailTokens.consume(row.id, now))) throw errors.invalidRequest(CODE_INVALID);
      await this.#markVerified(trx, tenantId, user.id, 'code');
    });
  }

  async #markVerified(trx: Executor, tenantId: string, userId: string, via: 'link' | 'code'): Promise<void> {
    const now = this.deps.clock.now();
    const r = this.#repos(trx);
    await r.emailTokens.consumeAll(tenantId, userId, 'verify_email', now);
    await r.users.setEmailVerified(tenantId, userId, now);
    await this.deps.events.record(trx, {
      tenantId,
      type: 'user.email_verified',
      organizationId: null,
      actor: { type: 'user', id: userId },
      data: { user_id: userId, via },
    });
  }

  // ---------------------------------------------------------------- password reset

  /**
   * "Forgot password?": limited per address and per IP (429 with the seconds to wait); then the
   * same work whether or not the address has an account (a token made and hashed, the message
   * rendered), and the same answer. Only an existing account gets the email.
   */
  async requestReset(tenant: Tenant, emailInput: string, ip: string, locale: Locale): Promise<void> {
    const now = this.deps.clock.now();
    const email = normalizeEmail(emailInput).slice(0, 254);
    const limits = this.#repos().rateLimits;
    for (const [bucket, max] of [
      [`pwreset:addr:${sha256Hex(email)}`, RESET_PER_ADDRESS],
      [`pwreset:ip:${sha256Hex(ip)}`, RESET_PER_IP],
    ] as const) {
      const waitMs = await limits.hit(tenant.id, bucket, max, RESET_WINDOW_MS, now);
      if (waitMs > 0) throw errors.tooManyRequests(Math.ceil(waitMs / 1000));
    }
    const token = `rst_${randomBase64url(32)}`;
    const secretHash = sha256Hex(token);
    const link = `${tenant.issuer}/reset-password?token=${token}`;
    const user = await this.#repos().users.findByEmail(tenant.id, email);
    // Both answers are sent after the same work: the token made and hashed, the message rendered.
    const texts = await this.#texts(tenant.id);
    await this.#repos().emailSettings.get(tenant.id);
    renderEmail('password_reset', translator(locale, texts), DEFAULT_BRAND, { link });
    if (!user) return;
    // The writes (token, outbox row, in one transaction) happen after the answer, so an existing
    // account's answer does not take longer than an unknown address's.
    this.#afterAnswer.run(() =>
      this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const r = this.#repos(trx);
        await r.emailTokens.consumeAll(tenant.id, user.id, 'password_reset', now);
        await r.emailTokens.insert({
          id: newId('etk', now),
          tenantId: tenant.id,
          userId: user.id,
          purpose: 'password_reset',
          kind: 'link',
          secretHash,
          email: user.email,
          createdAt: now,
          expiresAt: now + RESET_LINK_TTL_MS,
        });
        await this.enqueue(trx, tenant, { userId: user.id, to: user.email, template: 'password_reset', link, locale });
      }),
    );
  }

  /** Resolves when the writes started after an answer are done (shutdown, tests). */
  idle(): Promise<void> {
    return this.#afterAnswer.idle();
  }

  /**
   * A new password from a reset link: the link is used up, the password replaced, and every
   * session and refresh token of the user revoked, in one transaction with `user.password_reset`.
   */
  async completeReset(tenantId: string, token: string, password: string): Promise<void> {
    if (!(await this.linkValid(tenantId, token, 'password_reset'))) throw errors.invalidRequest(LINK_INVALID);
    if (password.length < 8 || password.length > 256) throw errors.invalidRequest(PASSWORD_LENGTH);
    const passwordHash = await hashPassword(password);
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const now = this.deps.clock.now();
      const live = await this.#liveLink(tenantId, token, 'password_reset', trx);
      const r = this.#repos(trx);
      if (!live || !(await r.emailTokens.consume(live.row.id, now))) throw errors.invalidRequest(LINK_INVALID);
      const userId = live.user.id;
      await r.users.update(
        tenantId,
        userId,
        { passwordHash, passwordSetBy: { type: 'user', id: userId, every_permission: false, hash_tag: passwordTag(passwordHash) } },
        now,
      );
      await r.emailTokens.consumeAll(tenantId, userId, 'password_reset', now);
      const sessions = await r.sessions.revokeAllForUser(tenantId, userId, now);
      // revokeAllForUser ends the user's refresh-token families too; this catches any left.
      await r.refreshTokens.revokeForSubject(tenantId, userId, now);
      const actor: Actor = { type: 'user', id: userId };
      for (const id of sessions)
        await this.deps.events.record(trx, {
          tenantId,
          type: 'session.revoked',
          organizationId: null,
          actor,
          data: { user_id: userId, session_id: id, reason: 'password_change' },
        });
      await this.deps.events.record(trx, {
        tenantId,
        type: 'user.password_reset',
        organizationId: null,
        actor,
        data: { user_id: userId, sessions_revoked: sessions.length },
      });
    });
  }
}
