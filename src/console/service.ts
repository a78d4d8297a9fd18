/**
 * The console's administrators: the tenant-level `tenant_admin` role held by users, and the
 * single-use setup links that create a tenant's first one (docs/console.md). The console's
 * actions themselves go through the management services, like /v1.
 */
import { randomBytes } from 'node:crypto';
import type { Actor } from '../events/catalogue.js';
import { errors } from '../kernel/errors.js';
import { safeEqual, sha256Hex } from '../kernel/crypto/hash.js';
import { iso, type ManagementDeps, reposOf } from '../management/common.js';
import { normalizeEmail } from '../users/emails.js';
import type { UserService } from '../users/service.js';
import { type Executor, isForeignKeyViolation } from '../storage/db.js';
import type { ConsoleSetupTokenRecord } from '../storage/repos/console.js';
import { currentPasswordSetBy, type UserRecord } from '../storage/repos/users.js';

/** A setup link lives this long (the spec: 24 hours). */
export const SETUP_LINK_TTL_MS = 24 * 3600_000;

/** The path of the setup page; the token follows in `?token=`. */
export const SETUP_PATH = '/console/setup';

const SYSTEM: Actor = { type: 'system', id: null };
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A setup link token (shown once) and its stored form (its SHA-256), expiring in 24 hours. */
export function newSetupToken(tenantId: string, now: number): { token: string; record: ConsoleSetupTokenRecord } {
  const token = randomBytes(32).toString('base64url');
  return { token, record: { tokenHash: sha256Hex(token), tenantId, createdAt: now, expiresAt: now + SETUP_LINK_TTL_MS, consumedAt: null } };
}

export const setupLink = (issuer: string, token: string) => `${issuer}${SETUP_PATH}?token=${token}`;

/** Opens the new administrator's session inside the setup transaction. */
export type SetupSignIn = (trx: Executor, user: UserRecord, now: number) => Promise<{ sessionId: string; pending: boolean; ip: string }>;

/** How many organizations, directories and SSO connections the candidate look-up lists at most. */
export const CANDIDATE_LIST_CAP = 20;

/** An account about to be made an administrator, and who besides the tenant controls it. */
export interface AdminCandidate {
  user: UserRecord;
  alreadyAdmin: boolean;
  /** Directory connections that created the account (owns_user). */
  directories: Array<{ organizationId: string; organizationName: string; connectionId: string; connectionName: string }>;
  /** SSO connections the account signs in through. */
  sso: Array<{ organizationId: string; organizationName: string; connectionId: string; connectionName: string; protocol: string }>;
  /**
   * The organization that verified the email's domain: its SSO connections may sign in as this
   * existing account (src/sso/service.ts links it), even before it ever has.
   */
  verifiedDomain: { organizationId: string; organizationName: string; domain: string } | null;
  /** The first memberships (CANDIDATE_LIST_CAP) and how many in all. */
  organizations: { total: number; first: Array<{ organizationId: string; name: string; role: string }> };
}

export function adminView(a: { userId: string; email: string; createdAt: number }) {
  return { user_id: a.userId, email: a.email, admin_since: iso(a.createdAt) };
}

/**
 * What the look-up showed of how the account signs in (email, whether it has a password and who
 * set it), as an opaque digest: the grant sends it back, and a change since then is refused (409).
 * Not the hash itself: a sign-in that re-hashes the same password with today's parameters
 * (upgradeHash) changes nothing the administrator decided on.
 */
export function accountFingerprint(u: UserRecord): string {
  const setBy = currentPasswordSetBy(u);
  const who = setBy && [setBy.type, setBy.id, setBy.every_permission];
  return sha256Hex(JSON.stringify([u.id, u.email, u.passwordHash !== null, who])).slice(0, 32);
}

export class ConsoleAdmins {
  constructor(
    private readonly deps: ManagementDeps,
    private readonly users: UserService,
  ) {}

  /** A new setup link token (`keyhall admin create --link`). */
  async issueSetupToken(tenantId: string): Promise<string> {
    const { token, record } = newSetupToken(tenantId, this.deps.clock.now());
    await reposOf(this.deps).consoleSetupTokens.insert(record);
    return token;
  }

  /** Whether a setup link can still be used (the page shows its form only then). */
  setupOpen(tenantId: string, token: string): Promise<boolean> {
    if (!TOKEN_SHAPE.test(token)) return Promise.resolve(false);
    return reposOf(this.deps).consoleSetupTokens.live(tenantId, sha256Hex(token), this.deps.clock.now());
  }

  /**
   * Creates an administrator from a setup link: the link is consumed, the user created and made
   * an administrator in one transaction, so a link makes exactly one administrator and a refused
   * email (taken) leaves the link usable. `signIn` opens the new administrator's session in that
   * same transaction (the console's setup page, docs/console.md), recorded as `login.succeeded`
   * with `method: setup_link`.
   */
  async completeSetup(tenantId: string, token: string, input: { email: string; password: string }, signIn?: SetupSignIn): Promise<UserRecord> {
    const gone = () => errors.pageExpired('this setup link has expired or was already used; ask the operator for a new one (keyhall admin create)');
    if (!TOKEN_SHAPE.test(token)) throw gone();
    return this.users.create(tenantId, SYSTEM, { email: input.email, password: input.password }, async (trx, user) => {
      const r = reposOf(this.deps, trx);
      const now = this.deps.clock.now();
      if (!(await r.consoleSetupTokens.consume(tenantId, sha256Hex(token), now))) throw gone();
      await this.#grant(trx, tenantId, user.id, SYSTEM, now);
      if (!signIn) return;
      const s = await signIn(trx, user, now);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'login.succeeded',
        organizationId: null,
        actor: { type: 'user', id: user.id },
        data: { user_id: user.id, session_id: s.sessionId, ip: s.ip, method: 'setup_link', ...(s.pending ? { second_factor_pending: true } : {}) },
      });
    });
  }

  async #grant(trx: Executor, tenantId: string, userId: string, actor: Actor, now = this.deps.clock.now()): Promise<boolean> {
    const r = reposOf(this.deps, trx);
    // Serialised with a concurrent change of the user's email or password (UserService.update).
    await r.users.lock(tenantId, userId, this.deps.db.dialect);
    const added = await r.tenantAdmins.insert({ tenantId, userId, createdAt: now }).catch((err: unknown) => {
      // The user was deleted between its look-up and this grant.
      throw isForeignKeyViolation(err) ? errors.notFound('the user no longer exists') : err;
    });
    if (added) await this.deps.events.record(trx, { tenantId, type: 'tenant_admin.granted', organizationId: null, actor, data: { user_id: userId } });
    return added;
  }

  /**
   * `keyhall admin create`: makes the user with this email an administrator, creating the user
   * (with this password) when there is none. False: already an administrator.
   */
  async grant(tenantId: string, email: string, password?: string): Promise<{ user: UserRecord; created: boolean; granted: boolean }> {
    const existing = await reposOf(this.deps).users.findByEmail(tenantId, normalizeEmail(email));
    if (existing) {
      const granted = await this.deps.events.transaction(this.deps.db.kysely, (trx) => this.#grant(trx, tenantId, existing.id, SYSTEM));
      return { user: existing, created: false, granted };
    }
    if (password === undefined) throw errors.notFound(`no user ${normalizeEmail(email)}`);
    const user = await this.users.create(tenantId, SYSTEM, { email, password }, async (trx, u) => {
      await this.#grant(trx, tenantId, u.id, SYSTEM);
    });
    return { user, created: true, granted: true };
  }

  /**
   * What the console shows before granting the role (GET /console/api/admins/candidate): the
   * account with this email, whether it already is an administrator, the organizations whose
   * SCIM directory created it, whose SSO connection it signs in through or whose verified domain
   * its email is in (their administrators control who it is), and its first memberships. 404 without such a user. A handful of indexed
   * queries, each capped; none per row.
   */
  async candidate(tenantId: string, email: string): Promise<AdminCandidate> {
    const r = reposOf(this.deps);
    const user = await r.users.findByEmail(tenantId, normalizeEmail(email));
    if (!user) throw errors.notFound(`no user with the email ${normalizeEmail(email)}; create the user first`);
    const domain = user.email.slice(user.email.lastIndexOf('@') + 1);
    const [alreadyAdmin, directories, sso, organizations, domainOrg] = await Promise.all([
      r.tenantAdmins.isAdmin(tenantId, user.id),
      r.directoryUsers.creatorsOf(tenantId, user.id, CANDIDATE_LIST_CAP),
      r.ssoIdentities.connectionsOf(tenantId, user.id, CANDIDATE_LIST_CAP),
      r.members.organizationsOf(tenantId, user.id, CANDIDATE_LIST_CAP),
      r.organizations.findByVerifiedDomain(tenantId, domain),
    ]);
    const verifiedDomain = domainOrg ? { organizationId: domainOrg.id, organizationName: domainOrg.name, domain } : null;
    return { user, alreadyAdmin, directories, sso, organizations, verifiedDomain };
  }

  /**
   * The console's grant (POST /console/api/admins): an existing user only, by email or (what the
   * console's screen sends, the account it showed) by id; the administrator who grants is the
   * actor. 404 without such a user, 409 when already one.
   */
  async grantExisting(
    tenantId: string,
    actor: Actor,
    who: { email: string } | { userId: string },
    fingerprint?: string,
  ): Promise<{ user: UserRecord; grantedAt: number }> {
    const users = reposOf(this.deps).users;
    const user = 'userId' in who ? await users.find(tenantId, who.userId) : await users.findByEmail(tenantId, normalizeEmail(who.email));
    if (!user) throw errors.notFound('userId' in who ? `no user ${who.userId}` : `no user with the email ${normalizeEmail(who.email)}; create the user first`);
    const now = this.deps.clock.now();
    const granted = await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      await this.#stillAdministrator(trx, tenantId, actor);
      if (fingerprint !== undefined) {
        // The account as the look-up showed it: a password or email set since then (by a key
        // that may now know it) is not granted on the strength of the earlier look-up.
        const r = reposOf(this.deps, trx).users;
        await r.lock(tenantId, user.id, this.deps.db.dialect);
        const current = await r.find(tenantId, user.id);
        if (!current) throw errors.notFound('the user no longer exists');
        if (!safeEqual(accountFingerprint(current), fingerprint)) {
          throw errors.conflict("the account's email or password changed since it was looked up; look it up again");
        }
      }
      return this.#grant(trx, tenantId, user.id, actor, now);
    });
    if (!granted) throw errors.conflict(`${user.email} already is an administrator`);
    return { user, grantedAt: now };
  }

  /**
   * The administrators, their rows locked (PostgreSQL) until commit; 403 when the acting
   * administrator lost the role since the request was authenticated (a concurrent removal), so a
   * request in flight cannot act with a role its sender no longer has.
   */
  async #stillAdministrator(trx: Executor, tenantId: string, actor: Actor): Promise<string[]> {
    const ids = await reposOf(this.deps, trx).tenantAdmins.userIds(tenantId, this.deps.db.dialect);
    if (actor.type === 'user' && !ids.includes(actor.id ?? '')) throw errors.forbidden('you are no longer an administrator of this tenant');
    return ids;
  }

  async #revoke(trx: Executor, tenantId: string, userId: string, actor: Actor): Promise<boolean> {
    const removed = await reposOf(this.deps, trx).tenantAdmins.remove(tenantId, userId);
    if (removed) await this.deps.events.record(trx, { tenantId, type: 'tenant_admin.revoked', organizationId: null, actor, data: { user_id: userId } });
    return removed;
  }

  /** `keyhall admin remove`: the user stays, without the role. False: was not an administrator. */
  async revoke(tenantId: string, userId: string): Promise<boolean> {
    return this.deps.events.transaction(this.deps.db.kysely, (trx) => this.#revoke(trx, tenantId, userId, SYSTEM));
  }

  /**
   * The console's removal (DELETE /console/api/admins/{userId}) by the administrator `actor`:
   * never themselves (409) and never the last administrator (409, checked with the rows locked);
   * 404 when the user is not an administrator. The user stays.
   */
  async revokeBy(tenantId: string, actor: Actor, userId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const ids = await this.#stillAdministrator(trx, tenantId, actor);
      if (!ids.includes(userId)) throw errors.notFound('this user is not an administrator');
      if (ids.length <= 1) throw errors.conflict('this is the last administrator of the tenant; make another one first');
      if (actor.type === 'user' && actor.id === userId)
        throw errors.conflict('you cannot remove yourself as an administrator; ask another administrator to do it');
      await this.#revoke(trx, tenantId, userId, actor);
    });
  }

  list(tenantId: string) {
    return reposOf(this.deps).tenantAdmins.list(tenantId);
  }

  count(tenantId: string) {
    return reposOf(this.deps).tenantAdmins.count(tenantId);
  }

  isAdmin(tenantId: string, userId: string): Promise<boolean> {
    return reposOf(this.deps).tenantAdmins.isAdmin(tenantId, userId);
  }
}
