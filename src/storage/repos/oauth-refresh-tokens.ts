import type { Kysely } from 'kysely';
import type { PresentedRefreshToken, RefreshFamily, RefreshTokenStore } from '../../oauth/types.js';
import type { Database } from '../schema.js';

type FamilyRow = Database['oauth_refresh_families'];

const SWEEP_EVERY = 200;

const toFamily = (r: FamilyRow): RefreshFamily => ({
  id: r.id,
  tenantId: r.tenant_id,
  clientId: r.client_id,
  sub: r.sub,
  scopes: r.scope ? r.scope.split(' ') : [],
  resources: JSON.parse(r.resources) as string[],
  jkt: r.jkt,
  extra: r.extra ? (JSON.parse(r.extra) as Record<string, unknown>) : null,
  generation: Number(r.generation),
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});

/**
 * Refresh tokens, stored by SHA-256 only. Rotation is a compare-and-set on the family's
 * `generation` (docs/storage.md), in one transaction with the insert of the new token, so two
 * parallel uses of one token cannot both win and a failure leaves the old token or the new one.
 */
export class OAuthRefreshTokenRepo implements RefreshTokenStore {
  #created = 0;
  constructor(private readonly db: Kysely<Database>) {}

  async createFamily(f: RefreshFamily, tokenHash: string, tokenExpiresAt: number): Promise<void> {
    // Expired families (and, by cascade, their tokens) are swept now and then, without a scheduler.
    if (++this.#created % SWEEP_EVERY === 0) await this.db.deleteFrom('oauth_refresh_families').where('expires_at', '<=', f.createdAt).execute();
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('oauth_refresh_families')
        .values({
          id: f.id,
          tenant_id: f.tenantId,
          client_id: f.clientId,
          sub: f.sub,
          scope: f.scopes.join(' '),
          resources: JSON.stringify(f.resources),
          jkt: f.jkt,
          extra: f.extra ? JSON.stringify(f.extra) : null,
          generation: f.generation,
          created_at: f.createdAt,
          expires_at: f.expiresAt,
          revoked_at: null,
        })
        .execute();
      await trx
        .insertInto('oauth_refresh_tokens')
        .values({ token_hash: tokenHash, tenant_id: f.tenantId, family_id: f.id, generation: f.generation, created_at: f.createdAt, expires_at: tokenExpiresAt })
        .execute();
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
      family: toFamily(row),
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
    return this.db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('oauth_refresh_families')
        .set({ generation: seenGeneration + 1 })
        .where('id', '=', familyId)
        .where('tenant_id', '=', tenantId)
        .where('generation', '=', seenGeneration)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('oauth_refresh_tokens')
        .values({
          token_hash: next.tokenHash,
          tenant_id: tenantId,
          family_id: familyId,
          generation: seenGeneration + 1,
          created_at: next.createdAt,
          expires_at: next.expiresAt,
        })
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

  async revokeFamily(tenantId: string, familyId: string, now: number): Promise<void> {
    await this.db
      .updateTable('oauth_refresh_families')
      .set({ revoked_at: now })
      .where('id', '=', familyId)
      .where('tenant_id', '=', tenantId)
      .where('revoked_at', 'is', null)
      .execute();
  }
}
