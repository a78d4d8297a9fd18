import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../db.js';
import type { PresentedRefreshToken, RefreshFamily, RefreshTokenStore } from '../../oauth/types.js';
import { compareAndSet, deleteExpired, Sweeper } from '../atomic.js';
import { codec, field, json, jsonOrNull, num, words } from '../codec.js';
import type { Database } from '../schema.js';

const families = codec<RefreshFamily>()('oauth_refresh_families', {
  id: true,
  tenantId: true,
  clientId: true,
  sub: true,
  scopes: words.in('scope'),
  resources: json<string[]>(),
  jkt: true,
  extra: jsonOrNull<Record<string, unknown>>(),
  generation: num,
  createdAt: true,
  expiresAt: true,
  revokedAt: true,
  organizationId: field<string | null | undefined, string | null>(
    (v) => v,
    (v) => v ?? null,
  ),
  sessionId: field<string | null | undefined, string | null>(
    (v) => v,
    (v) => v ?? null,
  ),
});

interface TokenRecord {
  tokenHash: string;
  tenantId: string;
  familyId: string;
  generation: number;
  createdAt: number;
  expiresAt: number;
}
const tokens = codec<TokenRecord>()('oauth_refresh_tokens', {
  tokenHash: true,
  tenantId: true,
  familyId: true,
  generation: num,
  createdAt: true,
  expiresAt: true,
});

/** Expired families (and, by cascade, their tokens) are swept every 200 creations, without a scheduler. */
const sweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'oauth_refresh_families', 'expires_at', now));

/**
 * Refresh tokens, stored by SHA-256 only. Rotation is a compare-and-set on the family's
 * `generation` (docs/storage.md), atomic with the insert of the new token, so two parallel uses
 * of one token cannot both win and a failure leaves the old token or the new one. On PostgreSQL
 * that is one statement (the update in a data-modifying CTE feeding the insert): one round trip
 * instead of five (begin, update, insert, commit). SQLite, which has no such CTE, runs the two in
 * a transaction (in process, no round trip).
 */
export class OAuthRefreshTokenRepo implements RefreshTokenStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect = 'sqlite',
  ) {}

  async createFamily(f: RefreshFamily, tokenHash: string, tokenExpiresAt: number): Promise<void> {
    await sweeper.tick(this.db, f.createdAt);
    if (this.dialect === 'postgres' && !this.db.isTransaction) {
      // One statement (both inserts or neither): one round trip instead of four.
      const row = families.toRow({ ...f, revokedAt: null });
      await sql`
        with family as (
          insert into oauth_refresh_families (id, tenant_id, client_id, sub, scope, resources, jkt, extra, generation, created_at, expires_at, revoked_at, organization_id, session_id)
          values (${row.id}, ${row.tenant_id}, ${row.client_id}, ${row.sub}, ${row.scope}, ${row.resources}, ${row.jkt}, ${row.extra}, ${row.generation}, ${row.created_at}, ${row.expires_at}, null, ${row.organization_id}, ${row.session_id})
          returning id
        )
        insert into oauth_refresh_tokens (token_hash, tenant_id, family_id, generation, created_at, expires_at)
        select ${tokenHash}::text, ${f.tenantId}::text, id, ${f.generation}::integer, ${f.createdAt}::bigint, ${tokenExpiresAt}::bigint from family`.execute(
        this.db,
      );
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('oauth_refresh_families')
        .values(families.toRow({ ...f, revokedAt: null }))
        .execute();
      const first = { tokenHash, tenantId: f.tenantId, familyId: f.id, generation: f.generation, createdAt: f.createdAt, expiresAt: tokenExpiresAt };
      await trx.insertInto('oauth_refresh_tokens').values(tokens.toRow(first)).execute();
    });
  }

  async find(tenantId: string, tokenHash: string): Promise<PresentedRefreshToken | undefined> {
    const row = await this.db
      .selectFrom('oauth_refresh_tokens as t')
      .innerJoin('oauth_refresh_families as f', 'f.id', 't.family_id')
      .selectAll('f')
      .select(['t.generation as token_generation', 't.expires_at as token_expires_at', 't.created_at as token_created_at'])
      .where('t.token_hash', '=', tokenHash)
      .where('t.tenant_id', '=', tenantId)
      .where('f.tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      family: families.toRecord(row),
      generation: Number(row.token_generation),
      expiresAt: row.token_expires_at,
      createdAt: row.token_created_at,
    };
  }

  async rotate(
    tenantId: string,
    familyId: string,
    seenGeneration: number,
    next: { tokenHash: string; createdAt: number; expiresAt: number },
  ): Promise<boolean> {
    if (this.dialect === 'postgres' && !this.db.isTransaction) {
      const generation = seenGeneration + 1;
      const r = await sql<{ token_hash: string }>`
        with moved as (
          update oauth_refresh_families set generation = ${generation}
          where id = ${familyId} and tenant_id = ${tenantId} and generation = ${seenGeneration} and revoked_at is null
          returning id
        )
        insert into oauth_refresh_tokens (token_hash, tenant_id, family_id, generation, created_at, expires_at)
        select ${next.tokenHash}::text, ${tenantId}::text, id, ${generation}::integer, ${next.createdAt}::bigint, ${next.expiresAt}::bigint from moved
        returning token_hash`.execute(this.db);
      // Older tokens of the family are kept: presenting one is how reuse is detected.
      return r.rows.length === 1;
    }
    return this.db.transaction().execute(async (trx) => {
      const moved = await compareAndSet(trx, 'oauth_refresh_families', {
        key: { id: familyId, tenant_id: tenantId },
        seen: { generation: seenGeneration, revoked_at: null },
        set: { generation: seenGeneration + 1 },
      });
      if (!moved) return false;
      await trx
        .insertInto('oauth_refresh_tokens')
        .values(tokens.toRow({ ...next, tenantId, familyId, generation: seenGeneration + 1 }))
        .execute();
      // Older tokens of the family are kept: presenting one is how reuse is detected.
      return true;
    });
  }

  /**
   * Revokes every live family of a user (`sub`) in the tenant, or only those of one client:
   * sign-out everywhere, session revocation by an admin or SCIM, user deletion, consent
   * withdrawal. Returns how many families were revoked.
   */
  async revokeForSubject(tenantId: string, sub: string, now: number, clientId?: string): Promise<number> {
    let q = this.db
      .updateTable('oauth_refresh_families')
      .set({ revoked_at: now })
      .where('tenant_id', '=', tenantId)
      .where('sub', '=', sub)
      .where('revoked_at', 'is', null);
    if (clientId !== undefined) q = q.where('client_id', '=', clientId);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Revokes the user's families signed in to the organization (they left it). Returns how many. */
  async revokeForOrganization(tenantId: string, organizationId: string, sub: string, now: number): Promise<number> {
    const r = await this.db
      .updateTable('oauth_refresh_families')
      .set({ revoked_at: now })
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, sub }))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  async revokeFamily(tenantId: string, familyId: string, now: number): Promise<void> {
    await compareAndSet(this.db, 'oauth_refresh_families', {
      key: { id: familyId, tenant_id: tenantId },
      seen: { revoked_at: null },
      set: { revoked_at: now },
    });
  }
}
