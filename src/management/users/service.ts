import type { PasskeyRecord } from '../../storage/repos/mfa.js';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import { acrOf } from '../../oauth/authorize/acr.js';
import { hash } from '@node-rs/argon2';
import type { Actor } from '../../events/catalogue.js';
import type { MembershipVault } from '../../connect/vault.js';
import { revokeMembershipCredentials } from '../../credentials/service.js';
import { errors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import { type Executor, isUniqueViolation } from '../../storage/db.js';
import { type PasswordSetBy, passwordTag, type UserPatch, type UserRecord } from '../../storage/repos/users.js';
import { changesOf, iso, type ManagementDeps, reposOf } from '../common.js';
import { holdsEveryPermission } from '../permissions.js';

/** Emails are unique per tenant in this form: trimmed and lower-cased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** argon2id (the library's default algorithm) with its defaults: 19 MiB, 2 passes, the OWASP baseline. */
export const hashPassword = (password: string) => hash(password);

/** The public shape of a user: never the password or its hash. */
export function userView(u: UserRecord) {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    email_verified: u.emailVerified,
    has_password: u.passwordHash !== null,
    created_at: iso(u.createdAt),
    updated_at: iso(u.updatedAt),
  };
}

const emailTaken = (err: unknown) => (isUniqueViolation(err) ? errors.conflict('email: a user with this email already exists') : err);

export function passkeyView(p: PasskeyRecord) {
  return {
    id: p.id,
    name: p.name,
    aaguid: p.aaguid,
    transports: p.transports,
    attestation_verified: p.attestationVerified,
    created_at: iso(p.createdAt),
    last_used_at: p.lastUsedAt === null ? null : iso(p.lastUsedAt),
    disabled_at: p.disabledAt === null ? null : iso(p.disabledAt),
  };
}

/** A hosted-login session as /v1 shows it: times, methods and client hints; never the cookie value or its hash. */
export function sessionView(s: SessionRecord) {
  const amr = s.amr ?? ['pwd'];
  return {
    id: s.id,
    created_at: iso(s.createdAt),
    auth_time: iso(s.authTime),
    last_seen_at: iso(s.lastSeenAt),
    idle_expires_at: iso(s.idleExpiresAt),
    expires_at: iso(s.expiresAt),
    amr,
    acr: acrOf(amr),
    mfa_pending: s.mfaPending === true,
    user_agent: s.userAgent,
    ip: s.ip,
  };
}

const isLive = (s: SessionRecord, now: number) => s.revokedAt === null && s.expiresAt > now && s.idleExpiresAt > now;

/** Who sets a password, recorded with it for the console's look-up before a grant. */
const setBy = (actor: Actor, everyPermission: boolean, passwordHash: string): PasswordSetBy => ({
  type: actor.type,
  id: actor.id,
  every_permission: everyPermission,
  hash_tag: passwordTag(passwordHash),
});

export class UserService {
  constructor(private readonly deps: ManagementDeps & { vault: MembershipVault }) {}

  /**
   * Whether the actor holds every permission, read from the key itself rather than taken from the
   * caller: an API key only when it is platform-bound with the whole catalogue. A console
   * administrator acts with every permission, and so does Keyhall itself (the setup link, where
   * the new administrator chooses the password, and the command line).
   */
  async #holdsEveryPermission(tenantId: string, actor: Actor): Promise<boolean> {
    if (actor.type !== 'api_key') return actor.type === 'user' || actor.type === 'system';
    const key = actor.id === null ? undefined : await reposOf(this.deps).apiKeys.find(tenantId, actor.id);
    return !!key && holdsEveryPermission(key);
  }


  /** `also` runs in the creating transaction (the console setup link makes the user an administrator there). */
  async create(tenantId: string, actor: Actor, input: { email: string; name?: string; password?: string }, also?: (trx: Executor, user: UserRecord) => Promise<void>) {
    const now = this.deps.clock.now();
    const user: UserRecord = {
      id: newId('user', now),
      tenantId,
      email: normalizeEmail(input.email),
      name: input.name ?? null,
      emailVerified: false,
      passwordHash: null,
      passwordSetBy: null,
      createdAt: now,
      updatedAt: now,
    };
    if (input.password !== undefined) {
      user.passwordHash = await hashPassword(input.password);
      user.passwordSetBy = setBy(actor, await this.#holdsEveryPermission(tenantId, actor), user.passwordHash);
    }
    try {
      await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        await reposOf(this.deps, trx).users.insert(user);
        await this.deps.events.record(trx, { tenantId, type: 'user.created', organizationId: null, actor, data: { user_id: user.id } });
        await also?.(trx, user);
      });
    } catch (err) {
      throw emailTaken(err);
    }
    return user;
  }

  async get(tenantId: string, id: string) {
    const user = await reposOf(this.deps).users.find(tenantId, id);
    if (!user) throw errors.notFound('user not found');
    return user;
  }

  list(tenantId: string, after: string | undefined, limit: number, email?: string) {
    return reposOf(this.deps).users.list(tenantId, after, limit, email === undefined ? undefined : normalizeEmail(email));
  }

  /**
   * Only a caller holding every permission (a console administrator, or a platform key with the
   * whole catalogue) may change how a tenant administrator signs in (email, password): an
   * administrator acts with every permission, so a narrower `users:write` key would otherwise
   * raise itself to administrator (a key acts only at or below its own privilege).
   */
  async update(tenantId: string, actor: Actor, id: string, input: { email?: string; name?: string | null; password?: string }) {
    const patch: UserPatch = {
      email: input.email === undefined ? undefined : normalizeEmail(input.email),
      name: input.name,
    };
    // How the user signs in may change: the caller's privilege decides whether it may for an
    // administrator, and is recorded with a new password.
    const mayChangeAdministrators = input.email === undefined && input.password === undefined ? true : await this.#holdsEveryPermission(tenantId, actor);
    if (input.password !== undefined) {
      patch.passwordHash = await hashPassword(input.password);
      patch.passwordSetBy = setBy(actor, mayChangeAdministrators, patch.passwordHash);
    }
    try {
      return await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const repo = reposOf(this.deps, trx).users;
        const current = await repo.find(tenantId, id);
        if (!current) throw errors.notFound('user not found');
        // A new password is always a change (a fresh salt); the rest only when it differs.
        const changes = changesOf(current, patch);
        const fields = (['email', 'name', 'passwordHash'] as const).filter((k) => k in changes).map((k) => (k === 'passwordHash' ? 'password' : k));
        // Nothing changes: no write, no updated_at bump, no event.
        if (fields.length === 0) return current;
        if (!mayChangeAdministrators && fields.some((f) => f !== 'name')) {
          // The row lock first: a grant of the role in flight commits before the check reads it.
          await repo.lock(tenantId, id, this.deps.db.dialect);
          if (await reposOf(this.deps, trx).tenantAdmins.isAdmin(tenantId, id)) {
            throw errors.insufficientScope("changing a tenant administrator's email or password needs every permission (a console administrator, or a key holding the whole catalogue)");
          }
        }
        const user = await repo.update(tenantId, id, changes, this.deps.clock.now());
        if (!user) throw errors.notFound('user not found');
        await this.deps.events.record(trx, { tenantId, type: 'user.updated', organizationId: null, actor, data: { user_id: id, fields } });
        return user;
      });
    } catch (err) {
      throw emailTaken(err);
    }
  }

  /** Revokes every hosted-login session of the user (one session.revoked event each); returns how many. */
  async revokeSessions(tenantId: string, actor: Actor, id: string): Promise<number> {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (!(await r.users.find(tenantId, id))) throw errors.notFound('user not found');
      const ids = await r.sessions.revokeAllForUser(tenantId, id, this.deps.clock.now());
      for (const sessionId of ids) {
        await this.deps.events.record(trx, { tenantId, type: 'session.revoked', organizationId: null, actor, data: { user_id: id, session_id: sessionId } });
      }
      return ids.length;
    });
  }

  /** A page of the user's live sessions (oldest first, by id); 404 for an unknown user. */
  async listSessions(tenantId: string, id: string, after: string | undefined, limit: number): Promise<SessionRecord[]> {
    const r = reposOf(this.deps);
    if (!(await r.users.find(tenantId, id))) throw errors.notFound('user not found');
    return r.sessions.listLive(tenantId, id, this.deps.clock.now(), after, limit);
  }

  /**
   * Ends one live session of the user (a session.revoked event, like ending them all). The
   * user's refresh tokens stay: they are not bound to a browser session (ending every session
   * revokes them too). 404 for a session of another user, one that already ended, or none.
   */
  async revokeSession(tenantId: string, actor: Actor, id: string, sessionId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (!(await r.users.find(tenantId, id))) throw errors.notFound('user not found');
      const now = this.deps.clock.now();
      const session = await r.sessions.find(tenantId, sessionId);
      if (!session || session.userId !== id || !isLive(session, now)) throw errors.notFound('session not found');
      const ids = await r.sessions.revoke(tenantId, id, sessionId, now);
      // Revoked by a concurrent request between the read and the write: already ended.
      if (ids.length === 0) throw errors.notFound('session not found');
      await this.deps.events.record(trx, { tenantId, type: 'session.revoked', organizationId: null, actor, data: { user_id: id, session_id: sessionId } });
    });
  }

  /** The user's passkeys (id, name, AAGUID, transports, times; never key material). */
  async listPasskeys(tenantId: string, id: string): Promise<PasskeyRecord[]> {
    const r = reposOf(this.deps);
    if (!(await r.users.find(tenantId, id))) throw errors.notFound('user not found');
    return r.mfa.listPasskeys(tenantId, id);
  }

  async deletePasskey(tenantId: string, actor: Actor, id: string, passkeyId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const removed = await reposOf(this.deps, trx).mfa.deletePasskey(tenantId, id, passkeyId);
      if (!removed) throw errors.notFound('passkey not found');
      await this.deps.events.record(trx, { tenantId, type: 'passkey.removed', organizationId: null, actor, data: { user_id: id, passkey_id: passkeyId, aaguid: removed.aaguid } });
    });
  }

  /**
   * Deletes the user and their memberships (each a member.removed event, the member's connected
   * accounts disconnected). A tenant administrator is not deleted (409): the role is removed
   * first, where the rules that keep one administrator and record `tenant_admin.revoked` apply
   * (the console's Administrators, `keyhall admin remove`).
   */
  async delete(tenantId: string, actor: Actor, id: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      // Locked with the other administrators' rows (PostgreSQL): a concurrent grant or removal waits.
      if ((await r.tenantAdmins.userIds(tenantId, this.deps.db.dialect)).includes(id)) {
        throw errors.conflict('this user is a tenant administrator: remove the administrator role first');
      }
      const memberships = await r.members.listByUser(tenantId, id);
      // Before the user's row goes (and their connected accounts with it): each account is
      // disconnected with its event, and revoked upstream after the commit.
      for (const m of memberships) await this.deps.vault.endMembership(trx, { tenantId, organizationId: m.organizationId, userId: id }, actor);
      if (!(await r.users.delete(tenantId, id))) throw errors.notFound('user not found');
      // Sessions and consents go with the user (foreign keys); refresh tokens are revoked.
      await r.refreshTokens.revokeForSubject(tenantId, id, this.deps.clock.now());
      for (const m of memberships) {
        await revokeMembershipCredentials(trx, { dialect: this.deps.db.dialect, events: this.deps.events, now: this.deps.clock.now() }, { tenantId, organizationId: m.organizationId, userId: id }, actor);
        await this.deps.events.record(trx, {
          tenantId,
          type: 'member.removed',
          organizationId: m.organizationId,
          actor,
          data: { organization_id: m.organizationId, user_id: id, role: m.role },
        });
      }
      await this.deps.events.record(trx, { tenantId, type: 'user.deleted', organizationId: null, actor, data: { user_id: id } });
    });
  }
}
