import { type Kysely, sql } from 'kysely';
import { compareAndSet, consumeOnce, deleteExpired } from '../atomic.js';
import { bool, codec, json, num } from '../codec.js';
import type { Database } from '../schema.js';

export interface PasskeyRecord {
  id: string;
  tenantId: string;
  userId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  aaguid: string;
  name: string;
  backedUp: boolean;
  attestationFormat: string;
  attestationVerified: boolean;
  createdAt: number;
  lastUsedAt: number | null;
  /** When its signature counter went backwards (a possible clone); a disabled passkey signs nothing in. */
  disabledAt: number | null;
}

/** The MFA policies, weakest first. */
export const MFA_POLICIES = ['off', 'optional', 'required'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];
/** A tenant without a stored policy runs this one. */
export const DEFAULT_MFA_POLICY: MfaPolicy = 'optional';

/** The strictest of some policies (the tenant's and its organizations': an organization can raise, never lower). */
export const strictestPolicy = (first: MfaPolicy, ...rest: MfaPolicy[]): MfaPolicy =>
  rest.reduce((a, b) => (MFA_POLICIES.indexOf(b) > MFA_POLICIES.indexOf(a) ? b : a), first);

export interface ChallengeRecord {
  challenge: string;
  tenantId: string;
  purpose: 'register' | 'login' | 'second_factor';
  binding: string;
  userId: string | null;
  attestation: 'none' | 'direct';
  expiresAt: number;
}

const passkeys = codec<PasskeyRecord>()('mfa_passkeys', {
  id: true,
  tenantId: true,
  userId: true,
  credentialId: true,
  publicKey: true,
  counter: num,
  transports: json<string[]>(),
  aaguid: true,
  name: true,
  backedUp: bool,
  attestationFormat: true,
  attestationVerified: bool,
  createdAt: num,
  lastUsedAt: true,
  disabledAt: true,
});

/** Passkeys, TOTP secrets, recovery codes, WebAuthn challenges and MFA policies. */
export class MfaRepo {
  constructor(private readonly db: Kysely<Database>) {}

  // --- passkeys

  async insertPasskey(p: PasskeyRecord): Promise<void> {
    await this.db.insertInto('mfa_passkeys').values(passkeys.toRow(p)).execute();
  }

  async listPasskeys(tenantId: string, userId: string): Promise<PasskeyRecord[]> {
    const rows = await this.db
      .selectFrom('mfa_passkeys')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .orderBy('created_at')
      .limit(100)
      .execute();
    return rows.map(passkeys.toRecord);
  }

  async findPasskeyByCredential(tenantId: string, credentialId: string): Promise<PasskeyRecord | undefined> {
    const row = await this.db
      .selectFrom('mfa_passkeys')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, credential_id: credentialId }))
      .executeTakeFirst();
    return row && passkeys.toRecord(row);
  }

  /**
   * Stores the new signature counter only if it is still the one the verification read (two
   * parallel uses of one assertion cannot both pass) and the passkey was not disabled meanwhile,
   * and moves last_used_at.
   */
  passkeyUsed(tenantId: string, id: string, seenCounter: number, counter: number, now: number): Promise<boolean> {
    return compareAndSet(this.db, 'mfa_passkeys', {
      key: { tenant_id: tenantId, id },
      seen: { counter: seenCounter, disabled_at: null },
      set: { counter, last_used_at: now },
    });
  }

  /** Disables a passkey whose counter went backwards; false when it was disabled already. */
  disablePasskey(tenantId: string, id: string, now: number): Promise<boolean> {
    return consumeOnce(this.db, 'mfa_passkeys', { key: { tenant_id: tenantId, id }, column: 'disabled_at', now });
  }

  async renamePasskey(tenantId: string, userId: string, id: string, name: string): Promise<boolean> {
    const r = await this.db
      .updateTable('mfa_passkeys')
      .set({ name })
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId, id }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async deletePasskey(tenantId: string, userId: string, id: string): Promise<PasskeyRecord | undefined> {
    const row = await this.db
      .deleteFrom('mfa_passkeys')
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && passkeys.toRecord(row);
  }

  // --- TOTP

  /** Whether the user has a second factor to be asked for (a confirmed TOTP or a passkey): one query, no rows read. */
  async hasSecondFactor(tenantId: string, userId: string): Promise<boolean> {
    const r = await this.db
      .selectNoFrom((eb) => [
        eb
          .or([
            eb.exists(
              eb
                .selectFrom('mfa_totp')
                .select('user_id')
                .where((w) => w.and([w('tenant_id', '=', tenantId), w('user_id', '=', userId), w('confirmed_at', 'is not', null)])),
            ),
            eb.exists(
              eb
                .selectFrom('mfa_passkeys')
                .select('user_id')
                .where((w) => w.and({ tenant_id: tenantId, user_id: userId })),
            ),
          ])
          .as('has'),
      ])
      .executeTakeFirst();
    return Boolean(r?.has);
  }

  async totp(tenantId: string, userId: string) {
    return this.db
      .selectFrom('mfa_totp')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .executeTakeFirst();
  }

  /** A new unconfirmed secret (replacing an unconfirmed one; a confirmed one stays). False when one is confirmed. */
  async startTotp(tenantId: string, userId: string, secret: string, now: number): Promise<boolean> {
    await this.db
      .deleteFrom('mfa_totp')
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('user_id', '=', userId), eb('confirmed_at', 'is', null)]))
      .execute();
    const r = await this.db
      .insertInto('mfa_totp')
      .values({ tenant_id: tenantId, user_id: userId, secret, confirmed_at: null, last_time_step: null, created_at: now })
      .onConflict((oc) => oc.columns(['tenant_id', 'user_id']).doNothing())
      .returning('user_id')
      .executeTakeFirst();
    return r !== undefined;
  }

  /**
   * Accepts a verified code's time step once: moves last_time_step forward (and confirms the
   * secret, when `confirm`) only if no code of this or a later step was accepted before.
   */
  async acceptTimeStep(tenantId: string, userId: string, step: number, now: number, confirm: boolean): Promise<boolean> {
    const r = await this.db
      .updateTable('mfa_totp')
      .set(confirm ? { last_time_step: step, confirmed_at: now } : { last_time_step: step })
      .where((eb) =>
        eb.and([
          eb('tenant_id', '=', tenantId),
          eb('user_id', '=', userId),
          confirm ? eb('confirmed_at', 'is', null) : eb('confirmed_at', 'is not', null),
          eb.or([eb('last_time_step', 'is', null), eb('last_time_step', '<', step)]),
        ]),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async deleteTotp(tenantId: string, userId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('mfa_totp')
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  // --- recovery codes

  async replaceRecoveryCodes(tenantId: string, userId: string, hashes: string[], now: number): Promise<void> {
    await this.db
      .deleteFrom('mfa_recovery_codes')
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .execute();
    await this.db
      .insertInto('mfa_recovery_codes')
      .values(hashes.map((h) => ({ tenant_id: tenantId, user_id: userId, code_hash: h, created_at: now, used_at: null })))
      .execute();
  }

  /** Consume-once: true for exactly one caller presenting an unused code. */
  useRecoveryCode(tenantId: string, userId: string, hash: string, now: number): Promise<boolean> {
    return consumeOnce(this.db, 'mfa_recovery_codes', { key: { tenant_id: tenantId, user_id: userId, code_hash: hash }, column: 'used_at', now });
  }

  async unusedRecoveryCodes(tenantId: string, userId: string): Promise<number> {
    const r = await this.db
      .selectFrom('mfa_recovery_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('user_id', '=', userId), eb('used_at', 'is', null)]))
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async deleteRecoveryCodes(tenantId: string, userId: string): Promise<void> {
    await this.db
      .deleteFrom('mfa_recovery_codes')
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .execute();
  }

  // --- WebAuthn challenges

  async insertChallenge(c: ChallengeRecord): Promise<void> {
    await this.db
      .insertInto('mfa_challenges')
      .values({
        challenge: c.challenge,
        tenant_id: c.tenantId,
        purpose: c.purpose,
        binding: c.binding,
        user_id: c.userId,
        attestation: c.attestation,
        expires_at: c.expiresAt,
        consumed_at: null,
      })
      .execute();
  }

  /**
   * Consume-once of a challenge of this tenant, purpose and browser binding, unexpired; returns
   * it to the one caller that consumed it (undefined for replays, other browsers, expired ones).
   */
  async consumeChallenge(
    tenantId: string,
    challenge: string,
    purpose: ChallengeRecord['purpose'],
    binding: string,
    now: number,
  ): Promise<ChallengeRecord | undefined> {
    const won = await consumeOnce(this.db, 'mfa_challenges', {
      key: { challenge, tenant_id: tenantId, purpose, binding },
      column: 'consumed_at',
      now,
      expiresColumn: 'expires_at',
    });
    if (!won) return undefined;
    const r = await this.db.selectFrom('mfa_challenges').selectAll().where('challenge', '=', challenge).executeTakeFirstOrThrow();
    return {
      challenge: r.challenge,
      tenantId: r.tenant_id,
      purpose: r.purpose as ChallengeRecord['purpose'],
      binding: r.binding,
      userId: r.user_id,
      attestation: r.attestation as ChallengeRecord['attestation'],
      expiresAt: Number(r.expires_at),
    };
  }

  sweepChallenges(now: number): Promise<void> {
    return deleteExpired(this.db, 'mfa_challenges', 'expires_at', now);
  }

  // --- policies

  async policies(tenantId: string, organizationIds: string[]): Promise<Map<string, MfaPolicy>> {
    const rows = await this.db
      .selectFrom('mfa_policies')
      .select(['organization_id', 'policy'])
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('organization_id', 'in', ['', ...organizationIds])]))
      .execute();
    return new Map(rows.map((r) => [r.organization_id, r.policy as MfaPolicy]));
  }

  /**
   * The user's organizations (plus `organizationId`, when given) and the policies stored for them
   * and for the tenant (''), in one statement: what `policyFor` reads at every sign-in, twice
   * (after the password and when the authorization continues), in one round trip instead of two.
   */
  async policiesForUser(
    tenantId: string,
    userId: string,
    organizationId?: string | null,
  ): Promise<{ organizations: string[]; policies: Map<string, MfaPolicy> }> {
    const rows = await this.db
      .selectFrom('members')
      .select(['organization_id', sql<string | null>`null`.as('policy')])
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .unionAll((eb) =>
        eb
          .selectFrom('mfa_policies as p')
          .select(['p.organization_id', sql<string | null>`p.policy`.as('policy')])
          .where('p.tenant_id', '=', tenantId)
          .where((w) =>
            w.or([
              w('p.organization_id', '=', ''),
              ...(organizationId ? [w('p.organization_id', '=', organizationId)] : []),
              w(
                'p.organization_id',
                'in',
                w.selectFrom('members as m').select('m.organization_id').where('m.tenant_id', '=', tenantId).where('m.user_id', '=', userId),
              ),
            ]),
          ),
      )
      .execute();
    const organizations = rows.filter((r) => r.policy === null).map((r) => r.organization_id);
    const policies = new Map(rows.filter((r) => r.policy !== null).map((r) => [r.organization_id, r.policy as MfaPolicy]));
    return { organizations, policies };
  }

  /** One stored policy ('' = the tenant's own), with when it was set; undefined when none is stored. */
  async policy(tenantId: string, organizationId: string): Promise<{ policy: MfaPolicy; updatedAt: number } | undefined> {
    const row = await this.db
      .selectFrom('mfa_policies')
      .select(['policy', 'updated_at'])
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId }))
      .executeTakeFirst();
    return row && { policy: row.policy as MfaPolicy, updatedAt: Number(row.updated_at) };
  }

  async deletePolicy(tenantId: string, organizationId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('mfa_policies')
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async setPolicy(tenantId: string, organizationId: string, policy: MfaPolicy, now: number): Promise<void> {
    await this.db
      .insertInto('mfa_policies')
      .values({ tenant_id: tenantId, organization_id: organizationId, policy, updated_at: now })
      .onConflict((oc) => oc.columns(['tenant_id', 'organization_id']).doUpdateSet({ policy, updated_at: now }))
      .execute();
  }
}
