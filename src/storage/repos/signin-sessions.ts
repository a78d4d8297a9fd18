import type { Kysely } from 'kysely';
import type { SessionRecord, SessionStore } from '../../oauth/authorize/types.js';
import { codec, field } from '../codec.js';
import type { Database } from '../schema.js';
import { OAuthRefreshTokenRepo } from './oauth-refresh-tokens.js';

const stored = codec<SessionRecord>()('signin_sessions', {
  id: true,
  tenantId: true,
  userId: true,
  userAgent: true,
  ip: true,
  authTime: true,
  createdAt: true,
  lastSeenAt: true,
  idleExpiresAt: true,
  expiresAt: true,
  revokedAt: true,
  amr: field<string[] | undefined, string | null>(
    (v) => (v ? (JSON.parse(v) as string[]) : ['pwd']),
    (v) => JSON.stringify(v ?? ['pwd']),
  ),
  mfaPending: field<boolean | undefined, number>(
    (v) => Number(v) === 1,
    (v) => (v ? 1 : 0),
  ),
  organizationId: field<string | null | undefined, string | null>(
    (v) => v,
    (v) => v ?? null,
  ),
  idp: field<string | undefined, string | null>(
    (v) => v ?? undefined,
    (v) => v ?? null,
  ),
  method: field<string | undefined, string | null>(
    (v) => v ?? undefined,
    (v) => v ?? null,
  ),
});

/** Browser sessions, looked up by the SHA-256 of the cookie value; revocation is one UPDATE seen by every instance. */
export class SigninSessionRepo implements SessionStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(s: SessionRecord, tokenHash: string): Promise<void> {
    await this.db
      .insertInto('signin_sessions')
      .values({ ...stored.toRow({ ...s, revokedAt: null }), token_hash: tokenHash })
      .execute();
  }

  async findByToken(tenantId: string, tokenHash: string): Promise<SessionRecord | undefined> {
    const r = await this.db
      .selectFrom('signin_sessions')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, token_hash: tokenHash }))
      .executeTakeFirst();
    return r && stored.toRecord(r);
  }

  async find(tenantId: string, id: string): Promise<SessionRecord | undefined> {
    const r = await this.db
      .selectFrom('signin_sessions')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return r && stored.toRecord(r);
  }

  /** A user's live sessions, newest first. */
  async listActive(tenantId: string, userId: string, now: number): Promise<SessionRecord[]> {
    const rows = await this.db
      .selectFrom('signin_sessions')
      .selectAll()
      .where((eb) =>
        eb.and([
          eb('tenant_id', '=', tenantId),
          eb('user_id', '=', userId),
          eb('revoked_at', 'is', null),
          eb('expires_at', '>', now),
          eb('idle_expires_at', '>', now),
        ]),
      )
      .orderBy('created_at', 'desc')
      .limit(100)
      .execute();
    return rows.map(stored.toRecord);
  }

  /**
   * A page of a user's live sessions (not revoked, not past either timeout), oldest first by id,
   * after the id `after`: GET /v1/users/{id}/sessions.
   */
  async listLive(tenantId: string, userId: string, now: number, after: string | undefined, limit: number): Promise<SessionRecord[]> {
    let q = this.db
      .selectFrom('signin_sessions')
      .selectAll()
      .where((eb) =>
        eb.and([
          eb('tenant_id', '=', tenantId),
          eb('user_id', '=', userId),
          eb('revoked_at', 'is', null),
          eb('expires_at', '>', now),
          eb('idle_expires_at', '>', now),
        ]),
      );
    if (after !== undefined) q = q.where('id', '>', after);
    return (await q.orderBy('id').limit(limit).execute()).map(stored.toRecord);
  }

  /** The second factor was given: the session becomes usable with these methods. False when it was not pending (or ended). */
  async completeMfa(tenantId: string, id: string, amr: string[], now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('signin_sessions')
      .set({ amr: JSON.stringify(amr), mfa_pending: 0, auth_time: now })
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('id', '=', id), eb('mfa_pending', '=', 1), eb('revoked_at', 'is', null)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Moves the idle deadline (called at most once a minute per session). */
  /** The session signed in to `organizationId` (docs/authorization.md). */
  async enterOrganization(tenantId: string, id: string, organizationId: string): Promise<void> {
    await this.db
      .updateTable('signin_sessions')
      .set({ organization_id: organizationId })
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .execute();
  }

  async touch(tenantId: string, id: string, now: number, idleExpiresAt: number): Promise<void> {
    await this.db
      .updateTable('signin_sessions')
      .set({ last_seen_at: now, idle_expires_at: idleExpiresAt })
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('id', '=', id), eb('revoked_at', 'is', null)]))
      .execute();
  }

  /** Revokes one session of a user; the ids revoked. */
  revoke(tenantId: string, userId: string, id: string, now: number): Promise<string[]> {
    return this.#revoke(tenantId, userId, now, id);
  }

  /** Revokes the user's sessions that are still live (not revoked, within both timeouts); the ids revoked. */
  async revokeLive(tenantId: string, userId: string, now: number): Promise<string[]> {
    const rows = await this.db
      .updateTable('signin_sessions')
      .set({ revoked_at: now })
      .where((eb) =>
        eb.and([
          eb('tenant_id', '=', tenantId),
          eb('user_id', '=', userId),
          eb('revoked_at', 'is', null),
          eb('expires_at', '>', now),
          eb('idle_expires_at', '>', now),
        ]),
      )
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /** Deletes sessions that ended (revoked, idle or absolute timeout) more than `keepMs` ago. */
  async sweep(now: number, keepMs: number): Promise<void> {
    const before = now - keepMs;
    await this.db
      .deleteFrom('signin_sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', before), eb('idle_expires_at', '<=', before), eb('revoked_at', '<=', before)]))
      .execute();
  }

  /**
   * Revokes all of a user's live sessions, and with them every refresh-token family of the user in
   * the tenant (run inside the caller's transaction: sign-out everywhere on /sessions,
   * DELETE /v1/users/{id}/sessions, SCIM deprovisioning). Returns the session ids revoked.
   */
  async revokeAllForUser(tenantId: string, userId: string, now: number): Promise<string[]> {
    await new OAuthRefreshTokenRepo(this.db).revokeForSubject(tenantId, userId, now);
    return this.#revoke(tenantId, userId, now);
  }

  /** Revokes the user's live sessions (or only session `id`); the ids revoked. */
  async #revoke(tenantId: string, userId: string, now: number, id?: string): Promise<string[]> {
    let q = this.db
      .updateTable('signin_sessions')
      .set({ revoked_at: now })
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('user_id', '=', userId), eb('revoked_at', 'is', null)]));
    if (id !== undefined) q = q.where('id', '=', id);
    return (await q.returning('id').execute()).map((r) => r.id);
  }
}
