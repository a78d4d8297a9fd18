/**
 * The account rules: creating, changing and deleting users (unique emails, who may change how an
 * administrator signs in), their sessions and passkeys. Management (/v1 and the console), SCIM,
 * SSO and sign-in reach users through src/users/; the HTTP views stay with the routes.
 */
import type { MembershipVault } from '../connect/vault.js';
import { revokeMembershipCredentials } from '../credentials/service.js';
import type { Actor } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import { changesOf } from '../kernel/changes.js';
import type { Clock } from '../kernel/clock.js';
import { errors } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { SessionRecord } from '../oauth/authorize/types.js';
import { type Db, type Executor, isUniqueViolation } from '../storage/db.js';
import { repos, type Repos } from '../storage/repos/index.js';
import type { PasskeyRecord } from '../storage/repos/mfa.js';
import { type PasswordSetBy, passwordTag, type UserMetadata, type UserPatch, type UserRecord } from '../storage/repos/users.js';
import { normalizeEmail } from './emails.js';
import { hashPassword } from './passwords.js';

export interface UserDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  vault: MembershipVault;
  /**
   * Whether the actor holds every permission (a console administrator, Keyhall itself, or a
   * platform API key with the whole catalogue): the management API's privilege rule, asked of it
   * rather than known here.
   */
  holdsEveryPermission: (tenantId: string, actor: Actor) => Promise<boolean>;
}

const emailTaken = (err: unknown) => (isUniqueViolation(err) ? errors.conflict('email: a user with this email already exists') : err);

const isLive = (s: SessionRecord, now: number) => s.revokedAt === null && s.expiresAt > now && s.idleExpiresAt > now;

/** Who sets a password, recorded with it for the console's look-up before a grant. */
const setBy = (actor: Actor, everyPermission: boolean, passwordHash: string): PasswordSetBy => ({
  type: actor.type,
  id: actor.id,
  every_permission: everyPermission,
  hash_tag: passwordTag(passwordHash),
});

export class UserService {
  constructor(private readonly deps: UserDeps) {}

  /** The repositories over the root database, or over `trx` inside a transaction. */
  #repos(trx?: Executor): Repos {
    return repos(trx ?? this.deps.db.kysely, this.deps.db.dialect);
  }

  /** `also` runs in the creating transaction (the console setup link makes the user an administrator there). */
  async create(
    tenantId: string,
    actor: Actor,
    input: { email: string; name?: string; password?: string; metadata?: UserMetadata; private_metadata?: UserMetadata },
    also?: (trx: Executor, user: UserRecord) => Promise<void>,
  ) {
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
      metadata: input.metadata ?? {},
      privateMetadata: input.private_metadata ?? {},
    };
    if (input.password !== undefined) {
      user.passwordHash = await hashPassword(input.password);
      user.passwordSetBy = setBy(actor, await this.deps.holdsEveryPermission(tenantId, actor), user.passwordHash);
    }
    try {
      await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        await this.#repos(trx).users.insert(user);
        await this.deps.events.record(trx, { tenantId, type: 'user.created', organizationId: null, actor, data: { user_id: user.id } });
        await also?.(trx, user);
      });
    } catch (err) {
      throw emailTaken(err);
    }
    return user;
  }

  async get(tenantId: string, id: string) {
    const user = await this.#repos().users.find(tenantId, id);
    if (!user) throw errors.notFound('user not found');
    return user;
  }

  list(tenantId: string, after: string | undefined, limit: number, email?: string) {
    return this.#repos().users.list(tenantId, after, limit, email === undefined ? undefined : normalizeEmail(email));
  }

  /**
   * Only a caller holding every permission (a console administrator, or a platform key with the
   * whole catalogue) may change how a tenant administrator signs in (email, password): an
   * administrator acts with every permission, so a narrower `users:write` key would otherwise
   * raise itself to administrator (a key acts only at or below its own privilege).
   *
   * A new email applies at once (the caller is authoritative, docs/account.md) and
   * is unverified unless `email_verified` says otherwise; `emailChanged` then runs in the same
   * transaction (the verification message to the new address).
   */
  async update(
    tenantId: string,
    actor: Actor,
    id: string,
    input: { email?: string; name?: string | null; password?: string; email_verified?: boolean; metadata?: UserMetadata; private_metadata?: UserMetadata },
    emailChanged?: (trx: Executor, user: UserRecord) => Promise<unknown>,
  ) {
    const patch: UserPatch = {
      email: input.email === undefined ? undefined : normalizeEmail(input.email),
      name: input.name,
      // Administrators and imports vouch for an address (docs/social.md: it lets a provider's verified identity link automatically).
      emailVerified: input.email_verified,
      metadata: input.metadata,
      privateMetadata: input.private_metadata,
    };
    // How the user signs in may change: the caller's privilege decides whether it may for an
    // administrator, and is recorded with a new password.
    const mayChangeAdministrators =
      input.email === undefined && input.password === undefined && input.email_verified === undefined
        ? true
        : await this.deps.holdsEveryPermission(tenantId, actor);
    if (input.password !== undefined) {
      patch.passwordHash = await hashPassword(input.password);
      patch.passwordSetBy = setBy(actor, mayChangeAdministrators, patch.passwordHash);
    }
    try {
      return await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const repo = this.#repos(trx).users;
        const current = await repo.find(tenantId, id);
        if (!current) throw errors.notFound('user not found');
        // A new password is always a change (a fresh salt); the rest only when it differs.
        const newEmail = patch.email !== undefined && patch.email !== current.email;
        if (newEmail && input.email_verified === undefined) patch.emailVerified = false;
        const changes = changesOf(current, patch);
        const apiNames = {
          email: 'email',
          name: 'name',
          emailVerified: 'email_verified',
          passwordHash: 'password',
          metadata: 'metadata',
          privateMetadata: 'private_metadata',
        };
        const fields = (Object.keys(apiNames) as Array<keyof typeof apiNames>).filter((k) => k in changes).map((k) => apiNames[k]);
        // Nothing changes: no write, no updated_at bump, no event.
        if (fields.length === 0) return current;
        if (!mayChangeAdministrators && fields.some((f) => f === 'email' || f === 'password' || f === 'email_verified')) {
          // The row lock first: a grant of the role in flight commits before the check reads it.
          await repo.lock(tenantId, id, this.deps.db.dialect);
          if (await this.#repos(trx).tenantAdmins.isAdmin(tenantId, id)) {
            throw errors.insufficientScope(
              "changing a tenant administrator's email or password needs every permission (a console administrator, or a key holding the whole catalogue)",
            );
          }
        }
        const user = await repo.update(tenantId, id, changes, this.deps.clock.now());
        if (!user) throw errors.notFound('user not found');
        await this.deps.events.record(trx, { tenantId, type: 'user.updated', organizationId: null, actor, data: { user_id: id, fields } });
        // A new password ends every session of the user (their clients are sent logout tokens).
        if (fields.includes('password')) await this.#endSessions(trx, tenantId, actor, id, 'password_change');
        if (newEmail && !user.emailVerified) await emailChanged?.(trx, user);
        return user;
      });
    } catch (err) {
      throw emailTaken(err);
    }
  }

  /** Revokes every hosted-login session of the user (one session.revoked event each); returns how many. */
  async revokeSessions(tenantId: string, actor: Actor, id: string): Promise<number> {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = this.#repos(trx);
      if (!(await r.users.find(tenantId, id))) throw errors.notFound('user not found');
      const ids = await r.sessions.revokeAllForUser(tenantId, id, this.deps.clock.now());
      for (const sessionId of ids) {
        await this.deps.events.record(trx, {
          tenantId,
          type: 'session.revoked',
          organizationId: null,
          actor,
          data: { user_id: id, session_id: sessionId, reason: 'admin' },
        });
      }
      return ids.length;
    });
  }

  /** A page of the user's live sessions (oldest first, by id); 404 for an unknown user. */
  async listSessions(tenantId: string, id: string, after: string | undefined, limit: number): Promise<SessionRecord[]> {
    const r = this.#repos();
    if (!(await r.users.find(tenantId, id))) throw errors.notFound('user not found');
    return r.sessions.listLive(tenantId, id, this.deps.clock.now(), after, limit);
  }

  /**
   * Ends one live session of the user (a session.revoked event, like ending them all). Its
   * clients are sent logout tokens and its refresh tokens without `offline_access` are revoked
   * (src/logout/outbox.ts); `offline_access` ones stay (ending every session revokes them too).
   * 404 for a session of another user, one that already ended, or none.
   */
  async revokeSession(tenantId: string, actor: Actor, id: string, sessionId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = this.#repos(trx);
      if (!(await r.users.find(tenantId, id))) throw errors.notFound('user not found');
      const now = this.deps.clock.now();
      const session = await r.sessions.find(tenantId, sessionId);
      if (!session || session.userId !== id || !isLive(session, now)) throw errors.notFound('session not found');
      const ids = await r.sessions.revoke(tenantId, id, sessionId, now);
      // Revoked by a concurrent request between the read and the write: already ended.
      if (ids.length === 0) throw errors.notFound('session not found');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'session.revoked',
        organizationId: null,
        actor,
        data: { user_id: id, session_id: sessionId, reason: 'admin' },
      });
    });
  }

  /**
   * Ends every live session of the user inside `trx`, one `session.revoked` with `reason` each.
   * Only the sessions' own refresh tokens go with them (src/logout/outbox.ts), not `offline_access` ones.
   */
  async #endSessions(trx: Executor, tenantId: string, actor: Actor, id: string, reason: 'password_change' | 'user_deleted'): Promise<void> {
    const ids = await this.#repos(trx).sessions.revokeLive(tenantId, id, this.deps.clock.now());
    for (const sessionId of ids) {
      await this.deps.events.record(trx, {
        tenantId,
        type: 'session.revoked',
        organizationId: null,
        actor,
        data: { user_id: id, session_id: sessionId, reason },
      });
    }
  }

  /** The user's passkeys (id, name, AAGUID, transports, times; never key material). */
  async listPasskeys(tenantId: string, id: string): Promise<PasskeyRecord[]> {
    const r = this.#repos();
    if (!(await r.users.find(tenantId, id))) throw errors.notFound('user not found');
    return r.mfa.listPasskeys(tenantId, id);
  }

  async deletePasskey(tenantId: string, actor: Actor, id: string, passkeyId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const removed = await this.#repos(trx).mfa.deletePasskey(tenantId, id, passkeyId);
      if (!removed) throw errors.notFound('passkey not found');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'passkey.removed',
        organizationId: null,
        actor,
        data: { user_id: id, passkey_id: passkeyId, aaguid: removed.aaguid },
      });
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
      const r = this.#repos(trx);
      // Locked with the other administrators' rows (PostgreSQL): a concurrent grant or removal waits.
      if ((await r.tenantAdmins.userIds(tenantId, this.deps.db.dialect)).includes(id)) {
        throw errors.conflict('this user is a tenant administrator: remove the administrator role first');
      }
      const memberships = await r.members.listByUser(tenantId, id);
      // Before the user's row goes (and their connected accounts with it): each account is
      // disconnected with its event, and revoked upstream after the commit.
      for (const m of memberships) await this.deps.vault.endMembership(trx, { tenantId, organizationId: m.organizationId, userId: id }, actor);
      // Before the user's row goes (and their sessions with it): each live session ends with its
      // event, so its clients are sent logout tokens.
      await this.#endSessions(trx, tenantId, actor, id, 'user_deleted');
      if (!(await r.users.delete(tenantId, id))) throw errors.notFound('user not found');
      // Sessions and consents go with the user (foreign keys); refresh tokens are revoked.
      await r.refreshTokens.revokeForSubject(tenantId, id, this.deps.clock.now());
      for (const m of memberships) {
        await revokeMembershipCredentials(
          trx,
          { dialect: this.deps.db.dialect, events: this.deps.events, now: this.deps.clock.now() },
          { tenantId, organizationId: m.organizationId, userId: id },
          actor,
        );
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
