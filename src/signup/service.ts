/**
 * Self sign-up and passwordless sign-in by email (issue 29 points 4 and 6, docs/signup.md). The
 * tenant's sign-in policy says whether either is offered. A challenge is one emailed 6-digit code
 * (10 minutes, five wrong tries) and, for a sign-up or when the tenant enables magic links, a
 * link; both stored only as SHA-256, single-use. A challenge is bound to the browser that asked
 * for it: its link signs in (or finishes the sign-up) only there, with the sign-in's flow sealed
 * under a key that browser's cookie derives; opened in another browser it asks for the code.
 * The sign-in engine (src/signin/engine.ts) opens the session and continues the flow.
 */
import { createCipheriv, createDecipheriv, randomBytes, randomInt } from 'node:crypto';
import { AfterAnswer } from '../kernel/after-answer.js';
import type { EmailService } from '../email/service.js';
import { renderEmail } from '../email/templates.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import { safeEqual, sha256Hex } from '../kernel/crypto/hash.js';
import { newId, randomBase64url } from '../kernel/ids.js';
import type { Tenant } from '../kernel/tenancy.js';
import type { SigninPolicyService } from '../management/signin-policy/service.js';
import { DEFAULT_BRAND } from '../screens/brand.js';
import { type Locale, NO_TENANT_TEXTS, translator } from '../screens/i18n/index.js';
import { type Db, type Executor, isUniqueViolation } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import type { ChallengePurpose, EmailChallengeRecord, SigninPolicyRecord } from '../storage/repos/signup.js';
import { passwordTag, type UserRecord } from '../storage/repos/users.js';
import { normalizeEmail } from '../users/emails.js';
import { hashPassword } from '../users/passwords.js';

export const CHALLENGE_CODE_TTL_MS = 10 * 60_000;
/** A sign-up's link lives as long as a verification link; a passwordless link as long as its code. */
export const SIGNUP_LINK_TTL_MS = 24 * 3600_000;
export const CHALLENGE_MAX_FAILURES = 5;
/** Emails asked for (sign-ups and sign-in codes) per address and per IP, and codes typed per IP, in LIMIT_WINDOW_MS. */
export const SEND_PER_ADDRESS = 5;
export const SEND_PER_IP = 20;
export const CODES_PER_IP = 30;
export const LIMIT_WINDOW_MS = 15 * 60_000;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

/** The sign-in context a challenge continues: the flow handle and return_to of the page that asked. */
export interface Continuation {
  flow?: string;
  returnTo?: string;
}

/** Why a sign-up or a code was refused: the HTTP status, the OAuth-style error code and the page's message key. */
export type Refusal =
  | { kind: 'refused'; status: 403; error: 'access_denied'; message: 'signup.off' | 'signup.sso' }
  | {
      kind: 'refused';
      status: 400;
      error: 'invalid_request';
      message: 'signup.domain' | 'error.invalid_request' | 'error.password_length' | 'error.passwords_differ';
    }
  | { kind: 'refused'; status: 409; error: 'conflict'; message: 'signup.exists' }
  | { kind: 'refused'; status: 400; error: 'invalid_grant'; message: 'error.email_code_invalid' | 'code.too_many' }
  | { kind: 'limited'; retryAfterSeconds: number };

/** A user the challenge (or an open sign-up) signed in; `context`: the flow it continues, when the browser is the one that asked. */
export type Accepted = { kind: 'accepted'; user: UserRecord; amr: string[]; context?: Continuation };

export type StartResult = Refusal | Accepted | { kind: 'sent'; challengeId: string; email: string };
export type LinkResult = Accepted | { kind: 'invalid' } | { kind: 'code'; challengeId: string; purpose: ChallengePurpose };

export interface EmailSigninDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  email: Pick<EmailService, 'enqueue' | 'queueVerification' | 'poke'>;
  policy: Pick<SigninPolicyService, 'current'>;
  /** Whether an organization of the tenant requires SSO for this address (it never signs up or in by email). */
  ssoRequired: (tenantId: string, email: string) => Promise<boolean>;
  onError?: (err: unknown) => void;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;
const CHALLENGE_ID = /^ech_[0-9a-z]{1,60}$/;
const LINK_TOKEN = /^(sgn|mgl)_[A-Za-z0-9_-]{43}$/;

const browserHash = (binding: string) => sha256Hex(`email-challenge:${binding}`);
const sealKey = (binding: string, challengeId: string) => Buffer.from(sha256Hex(`email-challenge-seal:${binding}:${challengeId}`), 'hex');

/** The continuation, encrypted under a key only the asking browser's cookie derives (AES-256-GCM). */
function seal(binding: string, challengeId: string, c: Continuation): string | null {
  if (!c.flow && !c.returnTo) return null;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(binding, challengeId), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(c), 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
}

function unseal(binding: string, challengeId: string, sealed: string | null): Continuation | undefined {
  if (!sealed) return undefined;
  const [iv, tag, body] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealKey(binding, challengeId), iv!);
    decipher.setAuthTag(tag!);
    return JSON.parse(Buffer.concat([decipher.update(body!), decipher.final()]).toString('utf8')) as Continuation;
  } catch {
    return undefined;
  }
}

const sixDigits = () => String(randomInt(0, 1_000_000)).padStart(6, '0');
const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1);

export class EmailSigninService {
  readonly #afterAnswer: AfterAnswer;

  constructor(private readonly deps: EmailSigninDeps) {
    this.#afterAnswer = new AfterAnswer(() => this.deps.email.poke(), deps.onError);
  }

  #repos(trx?: Executor) {
    return repos(trx ?? this.deps.db.kysely, this.deps.db.dialect);
  }

  /** What the login page offers: a "Create account" link, the "email me a code" form. */
  async offers(tenantId: string): Promise<{ signup: boolean; passwordless: boolean }> {
    const p = await this.deps.policy.current(tenantId);
    return { signup: p.signup !== 'off', passwordless: p.passwordless.length > 0 };
  }

  policy(tenantId: string): Promise<SigninPolicyRecord> {
    return this.deps.policy.current(tenantId);
  }

  /** Counts one request against each bucket; the seconds to wait when one is full. */
  async #limited(tenantId: string, buckets: Array<[string, number]>): Promise<Refusal | undefined> {
    const now = this.deps.clock.now();
    for (const [bucket, max] of buckets) {
      const waitMs = await this.#repos().rateLimits.hit(tenantId, bucket, max, LIMIT_WINDOW_MS, now);
      if (waitMs > 0) return { kind: 'limited', retryAfterSeconds: Math.ceil(waitMs / 1000) };
    }
    return undefined;
  }

  // ---------------------------------------------------------------- sign-up

  /**
   * A sign-up form: the policy's mode and domains, the password rule of /v1/users, the limits.
   * Without `require_verified_email` the account is created at once (unverified, a verification
   * email on its way) and signed in; with it, a challenge is emailed and the account is created
   * only when its code or link comes back. An address that already has an account gets the same
   * "check your email" answer then (and no email), so the form does not reveal accounts.
   */
  async startSignup(
    tenant: Tenant,
    input: { email: string; password: string; passwordRepeat: string },
    browser: { ip: string; binding: string },
    context: Continuation,
    locale: Locale,
  ): Promise<StartResult> {
    const policy = await this.deps.policy.current(tenant.id);
    if (policy.signup === 'off') return { kind: 'refused', status: 403, error: 'access_denied', message: 'signup.off' };
    const email = normalizeEmail(input.email).slice(0, 254);
    if (!EMAIL.test(email)) return { kind: 'refused', status: 400, error: 'invalid_request', message: 'error.invalid_request' };
    if (policy.signup === 'domains' && !policy.signupDomains.includes(domainOf(email)))
      return { kind: 'refused', status: 400, error: 'invalid_request', message: 'signup.domain' };
    if (input.password.length < PASSWORD_MIN || input.password.length > PASSWORD_MAX)
      return { kind: 'refused', status: 400, error: 'invalid_request', message: 'error.password_length' };
    if (input.password !== input.passwordRepeat) return { kind: 'refused', status: 400, error: 'invalid_request', message: 'error.passwords_differ' };
    const limited = await this.#limited(tenant.id, [
      [`signup:addr:${sha256Hex(email)}`, SEND_PER_ADDRESS],
      [`signup:ip:${sha256Hex(browser.ip)}`, SEND_PER_IP],
    ]);
    if (limited) return limited;
    if (await this.deps.ssoRequired(tenant.id, email)) return { kind: 'refused', status: 403, error: 'access_denied', message: 'signup.sso' };
    const passwordHash = await hashPassword(input.password);
    const existing = await this.#repos().users.findByEmail(tenant.id, email);

    if (!policy.requireVerifiedEmail) {
      if (existing) return { kind: 'refused', status: 409, error: 'conflict', message: 'signup.exists' };
      const user = await this.#createUser(tenant, email, passwordHash, false, locale);
      return user ? { kind: 'accepted', user, amr: ['pwd'], context } : { kind: 'refused', status: 409, error: 'conflict', message: 'signup.exists' };
    }

    const now = this.deps.clock.now();
    const id = newId('ech', now);
    const code = sixDigits();
    const token = `sgn_${randomBase64url(32)}`;
    const link = `${tenant.issuer}/signup/verify?token=${token}`;
    if (existing) {
      // The same work as for a new address (the message rendered), nothing written or sent.
      renderEmail('signup_verify', translator(locale, NO_TENANT_TEXTS), DEFAULT_BRAND, { link, code });
      return { kind: 'sent', challengeId: id, email };
    }
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = this.#repos(trx);
      await r.emailChallenges.consumeFor(tenant.id, 'signup', email, now);
      await r.emailChallenges.insert({
        id,
        tenantId: tenant.id,
        purpose: 'signup',
        email,
        userId: null,
        passwordHash,
        codeHash: sha256Hex(`${id}:${code}`),
        linkHash: sha256Hex(token),
        browserHash: browserHash(browser.binding),
        sealedContext: seal(browser.binding, id, context),
        createdAt: now,
        codeExpiresAt: now + CHALLENGE_CODE_TTL_MS,
        linkExpiresAt: now + SIGNUP_LINK_TTL_MS,
      });
      await this.deps.email.enqueue(trx, tenant, { userId: null, to: email, template: 'signup_verify', link, code, locale });
    });
    this.deps.email.poke();
    return { kind: 'sent', challengeId: id, email };
  }

  /** The account of a sign-up: `user.created` with `signup: true`; unverified, it gets a verification email in the same transaction. */
  async #createUser(tenant: Tenant, email: string, passwordHash: string, verified: boolean, locale: Locale, trxIn?: Executor): Promise<UserRecord | undefined> {
    const now = this.deps.clock.now();
    const id = newId('user', now);
    const user: UserRecord = {
      id,
      tenantId: tenant.id,
      email,
      name: null,
      emailVerified: verified,
      passwordHash,
      // The person set their own password: no administrator vouched for it.
      passwordSetBy: { type: 'user', id, every_permission: false, hash_tag: passwordTag(passwordHash) },
      createdAt: now,
      updatedAt: now,
    };
    const write = async (trx: Executor) => {
      await this.#repos(trx).users.insert(user);
      await this.deps.events.record(trx, {
        tenantId: tenant.id,
        type: 'user.created',
        organizationId: null,
        actor: { type: 'user', id },
        data: { user_id: id, signup: true, email_verified: verified },
      });
      if (!verified) await this.deps.email.queueVerification(trx, tenant, user, locale);
    };
    if (trxIn) await write(trxIn);
    else {
      try {
        await this.deps.events.transaction(this.deps.db.kysely, write);
      } catch (err) {
        if (isUniqueViolation(err)) return undefined;
        throw err;
      }
    }
    if (!verified) this.deps.email.poke();
    return user;
  }

  // ---------------------------------------------------------------- passwordless

  /**
   * "Email me a code": the same answer whether or not the address has an account (and for one
   * whose organization requires SSO): a challenge id to type the code against. Only an existing
   * account gets the email, written after the answer like a password reset's.
   */
  async startPasswordless(
    tenant: Tenant,
    emailInput: string,
    browser: { ip: string; binding: string },
    context: Continuation,
    locale: Locale,
  ): Promise<StartResult> {
    const policy = await this.deps.policy.current(tenant.id);
    if (policy.passwordless.length === 0) return { kind: 'refused', status: 403, error: 'access_denied', message: 'signup.off' };
    const email = normalizeEmail(emailInput).slice(0, 254);
    const limited = await this.#limited(tenant.id, [
      [`pwless:addr:${sha256Hex(email)}`, SEND_PER_ADDRESS],
      [`pwless:ip:${sha256Hex(browser.ip)}`, SEND_PER_IP],
    ]);
    if (limited) return limited;
    const now = this.deps.clock.now();
    const id = newId('ech', now);
    const code = sixDigits();
    const withLink = policy.passwordless.includes('magic_link');
    const token = `mgl_${randomBase64url(32)}`;
    const link = withLink ? `${tenant.issuer}/login/email/verify?token=${token}` : undefined;
    const user = await this.#repos().users.findByEmail(tenant.id, email);
    renderEmail('signin_email', translator(locale, NO_TENANT_TEXTS), DEFAULT_BRAND, { code, ...(link ? { link } : {}) });
    if (user && !(await this.deps.ssoRequired(tenant.id, email))) {
      this.#afterAnswer.run(() =>
        this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
          const r = this.#repos(trx);
          await r.emailChallenges.consumeFor(tenant.id, 'signin', email, now);
          await r.emailChallenges.insert({
            id,
            tenantId: tenant.id,
            purpose: 'signin',
            email,
            userId: user.id,
            passwordHash: null,
            codeHash: sha256Hex(`${id}:${code}`),
            linkHash: withLink ? sha256Hex(token) : null,
            browserHash: browserHash(browser.binding),
            sealedContext: seal(browser.binding, id, context),
            createdAt: now,
            codeExpiresAt: now + CHALLENGE_CODE_TTL_MS,
            linkExpiresAt: now + CHALLENGE_CODE_TTL_MS,
          });
          await this.deps.email.enqueue(trx, tenant, { userId: user.id, to: email, template: 'signin_email', code, ...(link ? { link } : {}), locale });
        }),
      );
    }
    return { kind: 'sent', challengeId: id, email };
  }

  /** Resolves when the writes started after an answer are done (shutdown, tests). */
  idle(): Promise<void> {
    return this.#afterAnswer.idle();
  }

  // ---------------------------------------------------------------- codes and links

  /**
   * A code typed on the page: limited per IP; five wrong codes use the challenge up. The code
   * proves the address whichever browser types it (it was never in a link).
   */
  async code(tenant: Tenant, purpose: ChallengePurpose, challengeId: string, codeInput: string, ip: string, locale: Locale): Promise<Accepted | Refusal> {
    const limited = await this.#limited(tenant.id, [[`emailcode:ip:${sha256Hex(ip)}`, CODES_PER_IP]]);
    if (limited) return limited;
    const wrong: Refusal = { kind: 'refused', status: 400, error: 'invalid_grant', message: 'error.email_code_invalid' };
    if (!CHALLENGE_ID.test(challengeId)) return wrong;
    const now = this.deps.clock.now();
    const c = await this.#repos().emailChallenges.find(tenant.id, challengeId);
    if (!c || c.purpose !== purpose || c.codeExpiresAt <= now) return wrong;
    if (c.consumedAt !== null) return c.failedAttempts >= CHALLENGE_MAX_FAILURES ? { ...wrong, message: 'code.too_many' } : wrong;
    const code = codeInput.trim();
    if (!/^\d{6}$/.test(code) || !safeEqual(c.codeHash, sha256Hex(`${c.id}:${code}`))) {
      await this.#repos().emailChallenges.fail(c.id, CHALLENGE_MAX_FAILURES, now);
      return c.failedAttempts + 1 >= CHALLENGE_MAX_FAILURES ? { ...wrong, message: 'code.too_many' } : wrong;
    }
    const done = await this.#complete(tenant, c, locale);
    return done ?? wrong;
  }

  /** Whether a link is live (its page shows one button; only the POST uses it, mail scanners open links). */
  async linkValid(tenantId: string, token: string, purpose: ChallengePurpose): Promise<boolean> {
    return (await this.#liveLink(tenantId, token, purpose)) !== undefined;
  }

  async #liveLink(tenantId: string, token: string, purpose: ChallengePurpose): Promise<EmailChallengeRecord | undefined> {
    if (!LINK_TOKEN.test(token)) return undefined;
    const c = await this.#repos().emailChallenges.findByLink(tenantId, sha256Hex(token));
    if (!c || c.purpose !== purpose || c.consumedAt !== null || c.linkExpiresAt <= this.deps.clock.now()) return undefined;
    return c;
  }

  /**
   * A link confirmed on its page. In the browser that asked for it, it completes the challenge and
   * continues that browser's sign-in. In another browser it completes nothing (a forwarded link
   * must not sign that browser in): the page asks for the email's code instead.
   */
  async link(tenant: Tenant, purpose: ChallengePurpose, token: string, binding: string, locale: Locale): Promise<LinkResult> {
    const c = await this.#liveLink(tenant.id, token, purpose);
    if (!c) return { kind: 'invalid' };
    if (!safeEqual(c.browserHash, browserHash(binding))) return { kind: 'code', challengeId: c.id, purpose };
    const done = await this.#complete(tenant, c, locale);
    if (!done) return { kind: 'invalid' };
    const context = unseal(binding, c.id, c.sealedContext);
    return context ? { ...done, context } : done;
  }

  /** Uses the challenge up (once) and yields its user: the new account of a sign-up (verified), or the passwordless sign-in's. */
  async #complete(tenant: Tenant, c: EmailChallengeRecord, locale: Locale): Promise<Accepted | undefined> {
    const now = this.deps.clock.now();
    if (c.purpose === 'signup') {
      let created: UserRecord | undefined;
      try {
        await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
          if (!(await this.#repos(trx).emailChallenges.consume(c.id, now))) return;
          created = await this.#createUser(tenant, c.email, c.passwordHash!, true, locale, trx);
        });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        created = undefined;
      }
      return created && { kind: 'accepted', user: created, amr: ['pwd'] };
    }
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = this.#repos(trx);
      if (!(await r.emailChallenges.consume(c.id, now))) return undefined;
      const user = c.userId ? await r.users.find(tenant.id, c.userId) : undefined;
      // A challenge is good only while the user still has the address it was sent to.
      if (!user || user.email !== c.email) return undefined;
      // The code or link came back from the address: it is verified.
      if (!user.emailVerified) {
        await r.users.setEmailVerified(tenant.id, user.id, now);
        await this.deps.events.record(trx, {
          tenantId: tenant.id,
          type: 'user.email_verified',
          organizationId: null,
          actor: { type: 'user', id: user.id },
          data: { user_id: user.id, via: 'signin' },
        });
      }
      return { kind: 'accepted' as const, user: { ...user, emailVerified: true }, amr: ['otp'] };
    });
  }
}
