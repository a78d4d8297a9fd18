/**
 * The console's administrators: the tenant-level `tenant_admin` role held by users, and the
 * single-use setup links that create a tenant's first one (docs/console.md). The console's
 * actions themselves go through the management services, like /v1.
 */
import { randomBytes } from 'node:crypto';
import type { Actor } from '../events/catalogue.js';
import { errors } from '../kernel/errors.js';
import { sha256Hex } from '../kernel/crypto/hash.js';
import { iso, type ManagementDeps, reposOf } from '../management/common.js';
import { normalizeEmail, type UserService } from '../management/users/service.js';
import type { Executor } from '../storage/db.js';
import type { ConsoleSetupTokenRecord } from '../storage/repos/console.js';
import type { UserRecord } from '../storage/repos/users.js';

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

export function adminView(a: { userId: string; email: string; createdAt: number }) {
  return { user_id: a.userId, email: a.email, admin_since: iso(a.createdAt) };
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
   * email (taken) leaves the link usable.
   */
  async completeSetup(tenantId: string, token: string, input: { email: string; password: string }): Promise<UserRecord> {
    const gone = () => errors.pageExpired('this setup link has expired or was already used; ask the operator for a new one (keyhall admin create)');
    if (!TOKEN_SHAPE.test(token)) throw gone();
    return this.users.create(tenantId, SYSTEM, { email: input.email, password: input.password }, async (trx, user) => {
      const r = reposOf(this.deps, trx);
      if (!(await r.consoleSetupTokens.consume(tenantId, sha256Hex(token), this.deps.clock.now()))) throw gone();
      await this.#grant(trx, tenantId, user.id, SYSTEM);
    });
  }

  async #grant(trx: Executor, tenantId: string, userId: string, actor: Actor): Promise<boolean> {
    const r = reposOf(this.deps, trx);
    const added = await r.tenantAdmins.insert({ tenantId, userId, createdAt: this.deps.clock.now() });
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

  /** `keyhall admin remove`: the user stays, without the role. False: was not an administrator. */
  async revoke(tenantId: string, userId: string): Promise<boolean> {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const removed = await reposOf(this.deps, trx).tenantAdmins.remove(tenantId, userId);
      if (removed) await this.deps.events.record(trx, { tenantId, type: 'tenant_admin.revoked', organizationId: null, actor: SYSTEM, data: { user_id: userId } });
      return removed;
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
