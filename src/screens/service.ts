/**
 * Sign-in rules: password login with failed-login limits, server-side sessions (idle and absolute
 * timeouts), logout, session and consent revocation. Every change writes its audit event in the
 * same transaction.
 */
import type { Actor, EventType } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import { sha256Hex } from '../kernel/crypto/hash.js';
import { newId, randomBase64url } from '../kernel/ids.js';
import { withSecondFactor } from '../oauth/authorize/acr.js';
import type { SessionRecord } from '../oauth/authorize/types.js';
import type { UserInfoSource } from '../oauth/userinfo/claims.js';
import type { Db, Executor } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import type { UserRecord } from '../storage/repos/users.js';
import { normalizeEmail } from '../users/emails.js';
import { type SignInMethod, signInMethodOf } from '../users/sign-in-methods.js';
import { hashPassword, rehashFor, upgradeHash, verifyPassword } from '../users/passwords.js';
import { type Brand, brandOf, DEFAULT_BRAND } from './brand.js';
import { randomBytes } from 'node:crypto';

export interface SigninSettings {
  sessionIdleSeconds: number;
  sessionMaxSeconds: number;
  loginMaxFailuresPerAccount: number;
  loginMaxFailuresPerIp: number;
  loginFailureWindowSeconds: number;
}

export type LoginResult =
  | { kind: 'ok'; session: SessionRecord; token: string; user: UserRecord }
  | { kind: 'invalid' }
  | { kind: 'limited'; retryAfterSeconds: number }
  /** The password was right, but the tenant's policy requires a verified email this user does not have yet (no session). */
  | { kind: 'unverified'; user: UserRecord };

export interface RequestMeta {
  ip: string;
  userAgent: string | null;
}

/** Every this many logins, ended sessions and finished failure windows are deleted. */
const SWEEP_EVERY = 100;
/** Ended sessions stay listed in storage this long (for support questions), then go. */
const KEEP_ENDED_SESSIONS_MS = 7 * 24 * 3600_000;

/** Sessions are touched (idle deadline moved) at most this often. */
const TOUCH_EVERY_MS = 60_000;

const userActor = (id: string | null): Actor => ({ type: 'user', id });

export class SigninService {
  #dummyHash: Promise<string> | undefined;
  #logins = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly events: EventRecorder,
    readonly settings: SigninSettings,
  ) {}

  /** A hash verified when the email is unknown, so both answers take the same time. */
  #dummy(): Promise<string> {
    this.#dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
    return this.#dummyHash;
  }

  async #record(trx: Parameters<EventRecorder['record']>[0], tenantId: string, type: EventType, actor: Actor, data: Record<string, unknown>) {
    await this.events.record(trx, { tenantId, type, organizationId: null, actor, data });
  }

  /**
   * Reserves this attempt against every limit before the password is checked (one atomic
   * statement per key, see SigninLoginFailureRepo.reserve), so parallel requests cannot all get a
   * check. Refused: the reservations already made are given back and the seconds until the
   * refusing window ends are returned.
   */
  async #reserve(tenantId: string, keys: Array<{ hash: string; max: number }>, now: number): Promise<number | undefined> {
    const failures = repos(this.db.kysely, this.db.dialect).loginFailures;
    const windowMs = this.settings.loginFailureWindowSeconds * 1000;
    const reserved: string[] = [];
    for (const k of keys) {
      if (await failures.reserve(tenantId, k.hash, k.max, now, windowMs)) {
        reserved.push(k.hash);
        continue;
      }
      for (const h of reserved) await failures.release(tenantId, h, now);
      const c = await failures.current(tenantId, k.hash, now);
      return Math.max(Math.ceil((c.windowEndsAt - now) / 1000), 1);
    }
    return undefined;
  }

  /**
   * Email + password. Unknown email and wrong password give the same answer after the same work.
   * Failures count per tenant+account and per tenant+IP in fixed windows; over a limit the answer
   * is `limited` until the window ends (never a permanent lockout).
   */
  async login(
    tenantId: string,
    emailInput: string,
    password: string,
    meta: RequestMeta,
    previousToken?: string,
    /** Whether this user owes a second factor (then the session starts pending, see docs/passkeys.md). */
    secondFactor?: (user: UserRecord) => Promise<boolean>,
    /** The sign-in policy requires a verified email before a sign-in completes (docs/signup.md). */
    requireVerifiedEmail = false,
  ): Promise<LoginResult> {
    const now = this.clock.now();
    if (++this.#logins % SWEEP_EVERY === 0) await this.#sweep(now);
    const email = normalizeEmail(emailInput).slice(0, 254);
    const account = { hash: sha256Hex(`account:${email}`), max: this.settings.loginMaxFailuresPerAccount };
    const ip = { hash: sha256Hex(`ip:${meta.ip}`), max: this.settings.loginMaxFailuresPerIp };
    // The attempt counts as a failure from here on; a success clears the account counter and
    // gives the IP's reservation back.
    const retry = await this.#reserve(tenantId, [account, ip], now);
    if (retry !== undefined) return { kind: 'limited', retryAfterSeconds: retry };

    const user = await repos(this.db.kysely, this.db.dialect).users.findByEmail(tenantId, email);
    const ok = await verifyPassword(user?.passwordHash ?? (await this.#dummy()), password.slice(0, 1024));
    if (!user || !user.passwordHash || !ok) {
      await this.events.transaction(this.db.kysely, async (trx) => {
        await this.#record(trx, tenantId, 'login.failed', userActor(user?.id ?? null), {
          user_id: user?.id ?? null,
          reason: 'invalid_credentials',
          ip: meta.ip,
        });
      });
      return { kind: 'invalid' };
    }
    await this.#rehash(tenantId, user, password.slice(0, 1024));
    if (requireVerifiedEmail && !user.emailVerified) {
      await this.events.transaction(this.db.kysely, async (trx) => {
        await this.#record(trx, tenantId, 'login.failed', userActor(user.id), { user_id: user.id, reason: 'email_unverified', ip: meta.ip });
      });
      return { kind: 'unverified', user };
    }
    const pending = secondFactor ? await secondFactor(user) : false;
    return this.#startSession(tenantId, user, meta, now, previousToken, {
      amr: ['pwd'],
      pending,
      method: 'password',
      accountKey: account.hash,
      ipKey: ip.hash,
    });
  }

  /**
   * Replaces an outdated or imported hash with today's argon2id; an imported one (another format
   * than argon2id) is replaced with the audit event `user.password_rehashed` in the same
   * transaction (the format, never a hash).
   */
  async #rehash(tenantId: string, user: UserRecord, password: string): Promise<void> {
    const rehash = await rehashFor(user, password);
    if (!rehash) return;
    await this.events.transaction(this.db.kysely, async (trx) => {
      const replaced = await upgradeHash(repos(trx, this.db.dialect).users, user, rehash);
      if (replaced && rehash.from !== 'argon2id')
        await this.#record(trx, tenantId, 'user.password_rehashed', userActor(user.id), { user_id: user.id, from: rehash.from, to: 'argon2id' });
    });
  }

  /** A passkey sign-in (verified by MfaService): a new session with the passkey's methods. */
  async passkeyLogin(tenantId: string, user: UserRecord, meta: RequestMeta, amr: string[], passkeyId: string, previousToken?: string): Promise<LoginResult> {
    return this.#startSession(tenantId, user, meta, this.clock.now(), previousToken, { amr, pending: false, method: 'passkey', passkeyId });
  }

  /** A sign-in by an emailed code or link (docs/signup.md), or a sign-up's first sign-in: a new session with those methods. */
  async emailLogin(tenantId: string, user: UserRecord, meta: RequestMeta, amr: string[], pending: boolean, previousToken?: string): Promise<LoginResult> {
    return this.#startSession(tenantId, user, meta, this.clock.now(), previousToken, { amr, pending, method: 'email' });
  }

  async #startSession(
    tenantId: string,
    user: UserRecord,
    meta: RequestMeta,
    now: number,
    previousToken: string | undefined,
    o: { amr: string[]; pending: boolean; method: SignInMethod; accountKey?: string; ipKey?: string; passkeyId?: string },
  ): Promise<LoginResult> {
    const opened = await this.events.transaction(this.db.kysely, async (trx) => {
      const s = await this.openSession(trx, tenantId, user.id, meta, now, { amr: o.amr, pending: o.pending, method: o.method }, previousToken);
      const failures = repos(trx, this.db.dialect).loginFailures;
      if (o.accountKey) await failures.clear(tenantId, o.accountKey);
      if (o.ipKey) await failures.release(tenantId, o.ipKey, now);
      if (o.passkeyId) {
        await this.#record(trx, tenantId, 'login.passkey', userActor(user.id), {
          user_id: user.id,
          session_id: s.session.id,
          passkey_id: o.passkeyId,
          amr: o.amr,
          ip: meta.ip,
        });
      } else {
        await this.#record(trx, tenantId, 'login.succeeded', userActor(user.id), {
          user_id: user.id,
          session_id: s.session.id,
          ip: meta.ip,
          ...(o.pending ? { second_factor_pending: true } : {}),
        });
      }
      return s;
    });
    return { kind: 'ok', ...opened, user };
  }

  /**
   * Starts a session for a user who has just signed in (password, passkey or SSO), inside the
   * caller's transaction, with the methods used (`amr`), how the first factor was given (`method`,
   * read from the amr when absent) and whether a second factor is still owed; the caller records
   * the login event. The session the browser had before is ended: a new
   * id at every login.
   */
  async openSession(
    trx: Executor,
    tenantId: string,
    userId: string,
    meta: RequestMeta,
    now: number,
    auth: { amr: string[]; pending: boolean; idp?: string; method?: SignInMethod },
    previousToken?: string,
  ): Promise<{ session: SessionRecord; token: string }> {
    const token = randomBase64url(32);
    const session: SessionRecord = {
      id: newId('ses', now),
      tenantId,
      userId,
      userAgent: meta.userAgent?.slice(0, 300) ?? null,
      ip: meta.ip,
      authTime: now,
      createdAt: now,
      lastSeenAt: now,
      idleExpiresAt: now + this.settings.sessionIdleSeconds * 1000,
      expiresAt: now + this.settings.sessionMaxSeconds * 1000,
      revokedAt: null,
      amr: auth.amr,
      mfaPending: auth.pending,
      ...(auth.idp ? { idp: auth.idp } : {}),
      method: auth.method ?? signInMethodOf({ amr: auth.amr, ...(auth.idp ? { idp: auth.idp } : {}) }),
    };
    const sessions = repos(trx, this.db.dialect).sessions;
    if (previousToken) {
      const previous = await sessions.findByToken(tenantId, sha256Hex(previousToken));
      if (previous && previous.revokedAt === null) await sessions.revoke(tenantId, previous.userId, previous.id, now);
    }
    await sessions.insert(session, sha256Hex(token));
    return { session, token };
  }

  async #sweep(now: number): Promise<void> {
    await repos(this.db.kysely, this.db.dialect).sessions.sweep(now, KEEP_ENDED_SESSIONS_MS);
    await repos(this.db.kysely, this.db.dialect).loginFailures.sweep(now);
  }

  /** The live session a cookie names, or undefined (revoked, idle or absolute timeout, other tenant, second factor owed). */
  async current(tenantId: string, token: string | undefined): Promise<SessionRecord | undefined> {
    const s = await this.#live(tenantId, token);
    return s?.mfaPending ? undefined : s;
  }

  /** The session a cookie names while its second factor is still owed (/mfa/challenge), or undefined. */
  async pending(tenantId: string, token: string | undefined): Promise<SessionRecord | undefined> {
    const s = await this.#live(tenantId, token);
    return s?.mfaPending ? s : undefined;
  }

  /**
   * The second factor was given: the pending session becomes usable, its login time and methods
   * updated (the first factor's methods and the second's: withSecondFactor).
   */
  async completeSecondFactor(tenantId: string, session: SessionRecord, second: string[]): Promise<SessionRecord | undefined> {
    const now = this.clock.now();
    const amr = withSecondFactor(session.amr ?? ['pwd'], second);
    const ok = await repos(this.db.kysely, this.db.dialect).sessions.completeMfa(tenantId, session.id, amr, now);
    return ok ? { ...session, amr, mfaPending: false, authTime: now } : undefined;
  }

  async #live(tenantId: string, token: string | undefined): Promise<SessionRecord | undefined> {
    if (!token || token.length > 100) return undefined;
    const repo = repos(this.db.kysely, this.db.dialect).sessions;
    const s = await repo.findByToken(tenantId, sha256Hex(token));
    const now = this.clock.now();
    if (!s || s.revokedAt !== null || s.expiresAt <= now || s.idleExpiresAt <= now) return undefined;
    if (now - s.lastSeenAt >= TOUCH_EVERY_MS) {
      const idle = Math.min(now + this.settings.sessionIdleSeconds * 1000, s.expiresAt);
      await repo.touch(tenantId, s.id, now, idle);
      return { ...s, lastSeenAt: now, idleExpiresAt: idle };
    }
    return s;
  }

  async user(tenantId: string, userId: string): Promise<UserRecord | undefined> {
    return repos(this.db.kysely, this.db.dialect).users.find(tenantId, userId);
  }

  /** What /userinfo tells about a user: profile and organization memberships. */
  async profile(tenantId: string, userId: string): Promise<UserInfoSource | undefined> {
    const found = await repos(this.db.kysely, this.db.dialect).users.findWithMemberships(tenantId, userId);
    if (!found) return undefined;
    // Keyhall's own profile first; the latest social sign-in's name and picture fill what it lacks.
    const { user, memberships, upstream } = found;
    return {
      id: user.id,
      email: user.email,
      emailVerified: user.emailVerified,
      name: user.name ?? upstream?.name ?? null,
      picture: upstream?.picture ?? null,
      organizations: memberships.map((m) => ({ id: m.organizationId, role: m.role })),
      metadata: user.metadata,
      privateMetadata: user.privateMetadata,
    };
  }

  /** The branding of the organization a sign-in names, or Keyhall's. */
  async brand(tenantId: string, organizationId: string | null | undefined): Promise<Brand> {
    if (!organizationId) return DEFAULT_BRAND;
    return brandOf(await repos(this.db.kysely, this.db.dialect).organizations.find(tenantId, organizationId));
  }

  listSessions(tenantId: string, userId: string): Promise<SessionRecord[]> {
    return repos(this.db.kysely, this.db.dialect).sessions.listActive(tenantId, userId, this.clock.now());
  }

  async logout(tenantId: string, session: SessionRecord): Promise<void> {
    const now = this.clock.now();
    await this.events.transaction(this.db.kysely, async (trx) => {
      const ids = await repos(trx, this.db.dialect).sessions.revoke(tenantId, session.userId, session.id, now);
      if (ids.length > 0) {
        await this.#record(trx, tenantId, 'logout', userActor(session.userId), { user_id: session.userId, session_id: session.id });
        // Every session end is a session.revoked (its clients are sent logout tokens: src/logout/).
        await this.#record(trx, tenantId, 'session.revoked', userActor(session.userId), {
          user_id: session.userId,
          session_id: session.id,
          reason: 'logout',
        });
      }
    });
  }

  /** Revokes one of the user's sessions, or all of them (`'all'`). Returns the revoked ids. */
  async revokeSessions(tenantId: string, userId: string, which: string, actor: Actor = userActor(userId)): Promise<string[]> {
    const now = this.clock.now();
    return this.events.transaction(this.db.kysely, async (trx) => {
      const repo = repos(trx, this.db.dialect).sessions;
      const ids = which === 'all' ? await repo.revokeAllForUser(tenantId, userId, now) : await repo.revoke(tenantId, userId, which, now);
      for (const id of ids) await this.#record(trx, tenantId, 'session.revoked', actor, { user_id: userId, session_id: id, reason: 'user' });
      return ids;
    });
  }

  async grantConsent(tenantId: string, userId: string, clientId: string, scopes: string[], resources: string[] = []): Promise<void> {
    const now = this.clock.now();
    await this.events.transaction(this.db.kysely, async (trx) => {
      await repos(trx, this.db.dialect).consents.grant(tenantId, userId, clientId, scopes, resources, now);
      await this.#record(trx, tenantId, 'consent.granted', userActor(userId), { user_id: userId, client_id: clientId, scopes, resources });
    });
  }

  listConsents(tenantId: string, userId: string) {
    return repos(this.db.kysely, this.db.dialect).consents.list(tenantId, userId);
  }

  /** Withdraws the user's consent for a client and revokes that client's refresh tokens for the user. */
  async revokeConsent(tenantId: string, userId: string, clientId: string): Promise<void> {
    const now = this.clock.now();
    await this.events.transaction(this.db.kysely, async (trx) => {
      await repos(trx, this.db.dialect).refreshTokens.revokeForSubject(tenantId, userId, now, clientId);
      if (await repos(trx, this.db.dialect).consents.revoke(tenantId, userId, clientId)) {
        await this.#record(trx, tenantId, 'consent.revoked', userActor(userId), { user_id: userId, client_id: clientId });
      }
    });
  }
}
