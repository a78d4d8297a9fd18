import type { Kysely } from 'kysely';
import type { SessionRecord, SessionStore } from '../../oauth/authorize/types.js';
import type { Database } from '../schema.js';
import { OAuthRefreshTokenRepo } from './oauth-refresh-tokens.js';

type Row = Database['signin_sessions'];
const toRecord = (r: Row): SessionRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  userAgent: r.user_agent,
  ip: r.ip,
  authTime: r.auth_time,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  idleExpiresAt: r.idle_expires_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});

/** Browser sessions, looked up by the SHA-256 of the cookie value; revocation is one UPDATE seen by every instance. */
export class SigninSessionRepo implements SessionStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(s: SessionRecord, tokenHash: string): Promise<void> {
    await this.db
      .insertInto('signin_sessions')
      .values({
        id: s.id,
        tenant_id: s.tenantId,
        token_hash: tokenHash,
        user_id: s.userId,
        user_agent: s.userAgent,
        ip: s.ip,
        auth_time: s.authTime,
        created_at: s.createdAt,
        last_seen_at: s.lastSeenAt,
        idle_expires_at: s.idleExpiresAt,
        expires_at: s.expiresAt,
        revoked_at: null,
      })
      .execute();
  }

  async findByToken(tenantId: string, tokenHash: string): Promise<SessionRecord | undefined> {
    const r = await this.db.selectFrom('signin_sessions').selectAll().where('tenant_id', '=', tenantId).where('token_hash', '=', tokenHash).executeTakeFirst();
    return r && toRecord(r);
  }

  async find(tenantId: string, id: string): Promise<SessionRecord | undefined> {
    const r = await this.db.selectFrom('signin_sessions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  /** A user's live sessions, newest first. */
  async listActive(tenantId: string, userId: string, now: number): Promise<SessionRecord[]> {
    const rows = await this.db
      .selectFrom('signin_sessions')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .where('idle_expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .limit(100)
      .execute();
    return rows.map(toRecord);
  }

  /** Moves the idle deadline (called at most once a minute per session). */
  async touch(tenantId: string, id: string, now: number, idleExpiresAt: number): Promise<void> {
    await this.db
      .updateTable('signin_sessions')
      .set({ last_seen_at: now, idle_expires_at: idleExpiresAt })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** Revokes one session of a user; the ids revoked. */
  async revoke(tenantId: string, userId: string, id: string, now: number): Promise<string[]> {
    const rows = await this.db
      .updateTable('signin_sessions')
      .set({ revoked_at: now })
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
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
    const rows = await this.db
      .updateTable('signin_sessions')
      .set({ revoked_at: now })
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }
}
