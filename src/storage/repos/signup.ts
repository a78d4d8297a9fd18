/** The tenant's sign-in policy and the emailed challenges of sign-up and passwordless sign-in (docs/signup.md). */
import { type Kysely, type Selectable, sql } from 'kysely';
import { deleteExpired, Sweeper } from '../atomic.js';
import type { Database } from '../schema.js';
import type { EmailChallengesTable } from '../tables/signup.js';

export const SIGNUP_MODES = ['off', 'open', 'domains'] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];
export const PASSWORDLESS_METHODS = ['email_code', 'magic_link'] as const;
export type PasswordlessMethod = (typeof PASSWORDLESS_METHODS)[number];

export interface SigninPolicyRecord {
  signup: SignupMode;
  signupDomains: string[];
  passwordless: PasswordlessMethod[];
  requireVerifiedEmail: boolean;
  updatedAt: number | null;
}

/** What a tenant that never set its policy has: no sign-up, no passwordless, no verification required. */
export const DEFAULT_SIGNIN_POLICY: SigninPolicyRecord = Object.freeze({
  signup: 'off',
  signupDomains: [],
  passwordless: [],
  requireVerifiedEmail: false,
  updatedAt: null,
}) as SigninPolicyRecord;

export class SigninPolicyRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(tenantId: string): Promise<SigninPolicyRecord | undefined> {
    const r = await this.db.selectFrom('signin_policies').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    if (!r) return undefined;
    return {
      signup: r.signup as SignupMode,
      signupDomains: JSON.parse(r.signup_domains) as string[],
      passwordless: JSON.parse(r.passwordless) as PasswordlessMethod[],
      requireVerifiedEmail: Number(r.require_verified_email) === 1,
      updatedAt: Number(r.updated_at),
    };
  }

  async put(tenantId: string, p: SigninPolicyRecord & { updatedAt: number }): Promise<void> {
    const values = {
      signup: p.signup,
      signup_domains: JSON.stringify(p.signupDomains),
      passwordless: JSON.stringify(p.passwordless),
      require_verified_email: p.requireVerifiedEmail ? 1 : 0,
      updated_at: p.updatedAt,
    };
    await this.db
      .insertInto('signin_policies')
      .values({ tenant_id: tenantId, ...values })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
      .execute();
  }
}

export type ChallengePurpose = 'signup' | 'signin';

export interface EmailChallengeRecord {
  id: string;
  tenantId: string;
  purpose: ChallengePurpose;
  email: string;
  userId: string | null;
  passwordHash: string | null;
  codeHash: string;
  linkHash: string | null;
  browserHash: string;
  sealedContext: string | null;
  failedAttempts: number;
  createdAt: number;
  codeExpiresAt: number;
  linkExpiresAt: number;
  consumedAt: number | null;
}

const challengeRecord = (r: Selectable<EmailChallengesTable>): EmailChallengeRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  purpose: r.purpose as ChallengePurpose,
  email: r.email,
  userId: r.user_id,
  passwordHash: r.password_hash,
  codeHash: r.code_hash,
  linkHash: r.link_hash,
  browserHash: r.browser_hash,
  sealedContext: r.sealed_context,
  failedAttempts: Number(r.failed_attempts),
  createdAt: Number(r.created_at),
  codeExpiresAt: Number(r.code_expires_at),
  linkExpiresAt: Number(r.link_expires_at),
  consumedAt: r.consumed_at === null ? null : Number(r.consumed_at),
});

const challengeSweeper = new Sweeper(100, (db, now) => deleteExpired(db, 'email_challenges', 'link_expires_at', now - 24 * 3600_000));

export class EmailChallengeRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(c: Omit<EmailChallengeRecord, 'failedAttempts' | 'consumedAt'>): Promise<void> {
    await challengeSweeper.tick(this.db, c.createdAt);
    await this.db
      .insertInto('email_challenges')
      .values({
        id: c.id,
        tenant_id: c.tenantId,
        purpose: c.purpose,
        email: c.email,
        user_id: c.userId,
        password_hash: c.passwordHash,
        code_hash: c.codeHash,
        link_hash: c.linkHash,
        browser_hash: c.browserHash,
        sealed_context: c.sealedContext,
        failed_attempts: 0,
        created_at: c.createdAt,
        code_expires_at: c.codeExpiresAt,
        link_expires_at: c.linkExpiresAt,
        consumed_at: null,
      })
      .execute();
  }

  async find(tenantId: string, id: string): Promise<EmailChallengeRecord | undefined> {
    const r = await this.db.selectFrom('email_challenges').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return r && challengeRecord(r);
  }

  async findByLink(tenantId: string, linkHash: string): Promise<EmailChallengeRecord | undefined> {
    const r = await this.db.selectFrom('email_challenges').selectAll().where('tenant_id', '=', tenantId).where('link_hash', '=', linkHash).executeTakeFirst();
    return r && challengeRecord(r);
  }

  /** Consume-once: true for exactly one caller, only while unconsumed. */
  async consume(id: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('email_challenges').set({ consumed_at: now }).where('id', '=', id).where('consumed_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Earlier challenges for the same address and purpose end when a new one is sent. */
  async consumeFor(tenantId: string, purpose: ChallengePurpose, email: string, now: number): Promise<void> {
    await this.db
      .updateTable('email_challenges')
      .set({ consumed_at: now })
      .where((eb) => eb.and({ tenant_id: tenantId, purpose, email }))
      .where('consumed_at', 'is', null)
      .execute();
  }

  /** Counts a wrong code; at `max` the challenge is used up (its link too). */
  async fail(id: string, max: number, now: number): Promise<void> {
    await this.db
      .updateTable('email_challenges')
      .set({
        failed_attempts: sql<number>`failed_attempts + 1`,
        consumed_at: sql<number | null>`case when failed_attempts + 1 >= ${max} then ${now} else consumed_at end`,
      })
      .where('id', '=', id)
      .execute();
  }
}
