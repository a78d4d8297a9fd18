/**
 * Verifiable-credential storage: types, offers (pre-authorized codes), proof nonces, issued
 * credential records and status lists. Every query filters on tenant_id.
 */
import type { Kysely } from 'kysely';
import type {
  CredentialOfferRecord,
  CredentialStatus,
  CredentialTypeRecord,
  IssuedCredentialRecord,
  OfferState,
  StatusListRecord,
  TxCodeInputMode,
  ClaimSpec,
} from '../../credentials/types.js';
import { compareAndSet, consumeOnce, deleteExpired, insertOnce, Sweeper } from '../atomic.js';
import { cast, codec, field, json, jsonOrNull } from '../codec.js';
import type { Database } from '../schema.js';

const types = codec<CredentialTypeRecord>()('credential_types', {
  tenantId: true,
  id: true,
  vct: true,
  displayName: true,
  claims: json<Record<string, ClaimSpec>>(),
  lifetimeSeconds: true,
  createdAt: true,
});

const offers = codec<CredentialOfferRecord>()('credential_offers', {
  id: true,
  tenantId: true,
  organizationId: true,
  configurationId: true,
  userId: true,
  claims: jsonOrNull<Record<string, unknown>>(),
  codeHash: true,
  codeEnc: true,
  refHash: true,
  txCodeHash: true,
  txCodeLength: true,
  txCodeInputMode: field<TxCodeInputMode | null, string | null>(
    (v) => v as TxCodeInputMode | null,
    (v) => v,
  ),
  failedAttempts: true,
  state: cast<OfferState>(),
  expiresAt: true,
  createdAt: true,
  redeemedAt: true,
});

const credentials = codec<IssuedCredentialRecord>()('credentials', {
  id: true,
  tenantId: true,
  organizationId: true,
  offerId: true,
  configurationId: true,
  vct: true,
  format: true,
  subject: true,
  userId: true,
  status: cast<CredentialStatus>(),
  statusListId: true,
  statusIndex: true,
  statusUri: true,
  issuedAt: true,
  expiresAt: true,
  revokedAt: true,
});

const lists = codec<StatusListRecord>()('credential_status_lists', {
  id: true,
  tenantId: true,
  size: true,
  allocated: true,
  version: true,
  signedJwt: true,
  signedVersion: true,
  signedUntil: true,
  createdAt: true,
});

const nonceSweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'credential_nonces', 'expires_at', now));

export class CredentialTypeRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** False when the tenant already has a type with this id. */
  async insert(t: CredentialTypeRecord): Promise<boolean> {
    return insertOnce(this.db, 'credential_types', types.toRow(t), { unique: ['tenant_id', 'id'] });
  }

  async find(tenantId: string, id: string): Promise<CredentialTypeRecord | undefined> {
    const row = await this.db
      .selectFrom('credential_types')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return row && types.toRecord(row);
  }

  async list(tenantId: string): Promise<CredentialTypeRecord[]> {
    return (await this.db.selectFrom('credential_types').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute()).map(types.toRecord);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('credential_types')
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}

export class CredentialOfferRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(o: CredentialOfferRecord): Promise<void> {
    await this.db.insertInto('credential_offers').values(offers.toRow(o)).execute();
  }

  async find(tenantId: string, id: string): Promise<CredentialOfferRecord | undefined> {
    const row = await this.db
      .selectFrom('credential_offers')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return row && offers.toRecord(row);
  }

  async findByCode(tenantId: string, codeHash: string): Promise<CredentialOfferRecord | undefined> {
    const row = await this.db
      .selectFrom('credential_offers')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, code_hash: codeHash }))
      .executeTakeFirst();
    return row && offers.toRecord(row);
  }

  /** Pending offers whose time is up, in every tenant, soonest expired first (the expiry sweep). */
  async duePending(now: number, limit: number): Promise<CredentialOfferRecord[]> {
    const rows = await this.db
      .selectFrom('credential_offers')
      .selectAll()
      .where('state', '=', 'pending')
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    return rows.map((row) => offers.toRecord(row));
  }

  async findByRef(tenantId: string, refHash: string): Promise<CredentialOfferRecord | undefined> {
    const row = await this.db
      .selectFrom('credential_offers')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, ref_hash: refHash }))
      .executeTakeFirst();
    return row && offers.toRecord(row);
  }

  /** Redeems a pending, unexpired offer (single use): true for exactly one caller. */
  redeem(tenantId: string, id: string, now: number): Promise<boolean> {
    return compareAndSet(this.db, 'credential_offers', {
      key: { tenant_id: tenantId, id },
      seen: { state: 'pending' },
      set: { state: 'redeemed', redeemed_at: now },
      also: (eb) => eb('expires_at', '>', now),
    });
  }

  /**
   * Counts one wrong tx_code on a pending offer in one statement; the attempt that reaches `max`
   * kills it. Returns the offer after the count (undefined: it was no longer pending).
   */
  async countFailure(tenantId: string, id: string, max: number): Promise<CredentialOfferRecord | undefined> {
    const row = await this.db
      .updateTable('credential_offers')
      .set((eb) => ({
        failed_attempts: eb('failed_attempts', '+', 1),
        state: eb
          .case()
          .when('failed_attempts', '>=', max - 1)
          .then('dead')
          .else('pending')
          .end(),
      }))
      .where((eb) => eb.and({ tenant_id: tenantId, id, state: 'pending' }))
      .returningAll()
      .executeTakeFirst();
    return row && offers.toRecord(row);
  }

  /** pending → dead (expiry); true for the caller that moved it. */
  kill(tenantId: string, id: string): Promise<boolean> {
    return compareAndSet(this.db, 'credential_offers', { key: { tenant_id: tenantId, id }, seen: { state: 'pending' }, set: { state: 'dead' } });
  }

  /** redeemed → issued: one credential per offer. */
  markIssued(tenantId: string, id: string): Promise<boolean> {
    return compareAndSet(this.db, 'credential_offers', { key: { tenant_id: tenantId, id }, seen: { state: 'redeemed' }, set: { state: 'issued' } });
  }

  /** Kills the pending or redeemed offers made for a member (they left the organization). */
  async killForMember(tenantId: string, organizationId: string, userId: string): Promise<void> {
    await this.db
      .updateTable('credential_offers')
      .set({ state: 'dead' })
      .where((eb) => eb.and([eb.and({ tenant_id: tenantId, organization_id: organizationId, user_id: userId }), eb('state', 'in', ['pending', 'redeemed'])]))
      .execute();
  }
}

export class CredentialNonceRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(tenantId: string, nonceHash: string, expiresAt: number, now: number): Promise<void> {
    await this.db.insertInto('credential_nonces').values({ nonce_hash: nonceHash, tenant_id: tenantId, expires_at: expiresAt, used_at: null }).execute();
    await nonceSweeper.tick(this.db, now);
  }

  /** Uses a nonce once: false when unknown, already used, expired or another tenant's. */
  consume(tenantId: string, nonceHash: string, now: number): Promise<boolean> {
    return consumeOnce(this.db, 'credential_nonces', {
      key: { nonce_hash: nonceHash, tenant_id: tenantId },
      column: 'used_at',
      now,
      expiresColumn: 'expires_at',
    });
  }
}

export class StatusListRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async find(tenantId: string, id: string): Promise<StatusListRecord | undefined> {
    const row = await this.db
      .selectFrom('credential_status_lists')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return row && lists.toRecord(row);
  }

  /** A list of the tenant with room under `maxAllocated`, if any. */
  async findOpen(tenantId: string, maxAllocated: number): Promise<StatusListRecord | undefined> {
    const row = await this.db
      .selectFrom('credential_status_lists')
      .selectAll()
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('allocated', '<', maxAllocated)]))
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    return row && lists.toRecord(row);
  }

  async insert(l: StatusListRecord): Promise<void> {
    await this.db.insertInto('credential_status_lists').values(lists.toRow(l)).execute();
  }

  async countAllocation(id: string): Promise<void> {
    await this.db
      .updateTable('credential_status_lists')
      .set((eb) => ({ allocated: eb('allocated', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  /** Counts a crowded list as full, so no new credential goes into it. */
  async markFull(id: string): Promise<void> {
    await this.db
      .updateTable('credential_status_lists')
      .set((eb) => ({ allocated: eb.ref('size') }))
      .where('id', '=', id)
      .execute();
  }

  /** A bit changed: the cached token no longer matches. */
  async bumpVersion(id: string): Promise<void> {
    await this.db
      .updateTable('credential_status_lists')
      .set((eb) => ({ version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  /** Caches a signed token made for `version`, unless a newer one was cached meanwhile. */
  async cacheSigned(id: string, version: number, jwt: string, until: number): Promise<void> {
    await this.db
      .updateTable('credential_status_lists')
      .set({ signed_jwt: jwt, signed_version: version, signed_until: until })
      .where((eb) => eb.and([eb('id', '=', id), eb.or([eb('signed_version', 'is', null), eb('signed_version', '<=', version)])]))
      .execute();
  }

  /** The revoked indexes of a list. */
  async revokedIndexes(id: string): Promise<number[]> {
    const rows = await this.db
      .selectFrom('credentials')
      .select('status_index')
      .where((eb) => eb.and({ status_list_id: id, status: 'revoked' }))
      .execute();
    return rows.map((r) => Number(r.status_index));
  }
}

export class CredentialRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** False when the status slot is taken (random allocation collided). */
  async insert(c: IssuedCredentialRecord): Promise<boolean> {
    return insertOnce(this.db, 'credentials', credentials.toRow(c), { unique: ['status_list_id', 'status_index'] });
  }

  async find(tenantId: string, organizationId: string, id: string): Promise<IssuedCredentialRecord | undefined> {
    const row = await this.db
      .selectFrom('credentials')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .executeTakeFirst();
    return row && credentials.toRecord(row);
  }

  async list(tenantId: string, organizationId: string, opts: { after?: string | undefined; limit: number }): Promise<IssuedCredentialRecord[]> {
    let q = this.db
      .selectFrom('credentials')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId }));
    if (opts.after) q = q.where('id', '>', opts.after);
    return (await q.orderBy('id').limit(opts.limit).execute()).map(credentials.toRecord);
  }

  /** The valid credentials of one configuration issued for a member. */
  async validForMember(tenantId: string, organizationId: string, userId: string, configurationId: string): Promise<IssuedCredentialRecord[]> {
    const rows = await this.db
      .selectFrom('credentials')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, user_id: userId, configuration_id: configurationId, status: 'valid' }))
      .orderBy('id')
      .execute();
    return rows.map(credentials.toRecord);
  }

  /** valid → revoked (compare-and-set): true for the caller that flipped it. */
  revoke(tenantId: string, id: string, now: number): Promise<boolean> {
    return compareAndSet(this.db, 'credentials', { key: { tenant_id: tenantId, id }, seen: { status: 'valid' }, set: { status: 'revoked', revoked_at: now } });
  }
}
