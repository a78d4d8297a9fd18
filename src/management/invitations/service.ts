/**
 * Invitations to an organization (docs/invitations.md, issue 29 point 5): created, listed,
 * resent and revoked through /v1; accepted on the hosted page /invitations/accept by the account
 * with the invited address, or by a new account the invitation creates (whatever the tenant's
 * sign-up mode: the link proved the address, so it counts as verified). The link's secret is
 * stored only as SHA-256 and works once, for its address, until it expires.
 */
import type { EmailSender } from '../../email/sender.js';
import { type EmailService, PASSWORD_LENGTH } from '../../email/service.js';
import type { Actor } from '../../events/catalogue.js';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { errors } from '../../kernel/errors.js';
import { newId, newSecret } from '../../kernel/ids.js';
import type { Tenant } from '../../kernel/tenancy.js';
import type { Executor } from '../../storage/db.js';
import type { InvitationRecord } from '../../storage/repos/invitations.js';
import type { Repos } from '../../storage/repos/index.js';
import type { UserRecord } from '../../storage/repos/users.js';
import { normalizeEmail } from '../../users/emails.js';
import type { UserService } from '../../users/service.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';
import { resolveRoles } from '../roles/service.js';

/** expires_in, seconds: default 7 days, from 5 minutes to 30 days. */
export const INVITATION_TTL_DEFAULT = 7 * 86_400;
export const INVITATION_TTL_MIN = 300;
export const INVITATION_TTL_MAX = 30 * 86_400;

// The refusals of the accept page (English; the page shows the catalogue's `error.invitation_*` in its language).
export const INVITATION_INVALID = 'This invitation link is not valid. Ask for a new invitation.';
export const INVITATION_EXPIRED = 'This invitation has expired. Ask for a new one.';
export const INVITATION_USED = 'This invitation was already accepted.';
export const INVITATION_REVOKED = 'This invitation was withdrawn.';
export const INVITATION_OTHER_EMAIL = 'This invitation is for another email address.';
export const INVITATION_HAS_ACCOUNT = 'An account with this email address exists: sign in to accept the invitation.';

const TOKEN_PREFIX = 'ivt_';
const TOKEN_SHAPE = /^ivt_[A-Za-z0-9_-]{43}$/;
const SYSTEM: Actor = { type: 'system', id: null };

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export const statusOf = (i: InvitationRecord, now: number): InvitationStatus =>
  i.acceptedAt !== null ? 'accepted' : i.revokedAt !== null ? 'revoked' : i.expiresAt <= now ? 'expired' : 'pending';

export function invitationView(i: InvitationRecord, now: number) {
  return {
    id: i.id,
    organization_id: i.organizationId,
    email: i.email,
    roles: i.roles,
    status: statusOf(i, now),
    expires_at: iso(i.expiresAt),
    created_at: iso(i.createdAt),
    sent_at: iso(i.sentAt),
    accepted_at: i.acceptedAt === null ? null : iso(i.acceptedAt),
    accepted_by: i.acceptedBy,
    revoked_at: i.revokedAt === null ? null : iso(i.revokedAt),
  };
}

/** What the accept page needs: the invitation, its organization's name, and the account with its address (if any). */
export interface OpenInvitation {
  invitation: InvitationRecord;
  organizationName: string;
  account: UserRecord | undefined;
}

/** Signs the new user in, inside the transaction that creates them (the sign-in engine's invitation entry). */
export type InvitationSignIn = (trx: Executor, user: UserRecord, now: number) => Promise<{ sessionId: string; pending: boolean; ip: string }>;

export interface InvitationDeps extends ManagementDeps {
  email: Pick<EmailService, 'enqueue'>;
  sender: Pick<EmailSender, 'poke'>;
  users: Pick<UserService, 'create'>;
}

export class InvitationService {
  constructor(private readonly deps: InvitationDeps) {}

  async #organization(r: Repos, tenantId: string, orgId: string) {
    const org = await r.organizations.find(tenantId, orgId);
    if (!org) throw errors.notFound('organization not found');
    return org;
  }

  /** Writes a new link's email in `trx`; the link carries a fresh secret. */
  async #send(trx: Executor, tenant: Tenant, i: { email: string; organizationName: string }, token: string): Promise<void> {
    const account = await reposOf(this.deps, trx).users.findByEmail(tenant.id, i.email);
    await this.deps.email.enqueue(trx, tenant, {
      userId: account?.id ?? null,
      to: i.email,
      template: 'invitation',
      link: `${tenant.issuer}/invitations/accept?token=${token}`,
      organization: i.organizationName,
    });
  }

  async create(tenant: Tenant, actor: Actor, orgId: string, input: { email: string; roles?: string[]; expires_in?: number }) {
    const now = this.deps.clock.now();
    const email = normalizeEmail(input.email);
    const ttl = input.expires_in ?? INVITATION_TTL_DEFAULT;
    const token = newSecret(TOKEN_PREFIX);
    const invitation = await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      const org = await this.#organization(r, tenant.id, orgId);
      const roles = await resolveRoles(r, tenant.id, orgId, input.roles ?? [await r.roles.defaultRole(tenant.id)]);
      const account = await r.users.findByEmail(tenant.id, email);
      if (account && (await r.members.find(tenant.id, orgId, account.id))) throw errors.conflict('email: already a member of the organization');
      if (await r.invitations.findPending(tenant.id, orgId, email, now)) throw errors.conflict('email: a pending invitation exists; resend or revoke it');
      const i: InvitationRecord = {
        id: newId('inv', now),
        tenantId: tenant.id,
        organizationId: orgId,
        email,
        roles,
        ttlSeconds: ttl,
        invitedBy: actor,
        createdAt: now,
        sentAt: now,
        expiresAt: now + ttl * 1000,
        acceptedAt: null,
        acceptedBy: null,
        revokedAt: null,
      };
      await r.invitations.insert(i, sha256Hex(token));
      await this.#send(trx, tenant, { email, organizationName: org.name }, token);
      await this.deps.events.record(trx, {
        tenantId: tenant.id,
        type: 'invitation.created',
        organizationId: orgId,
        actor,
        data: { invitation_id: i.id, organization_id: orgId, email, roles, expires_at: iso(i.expiresAt) },
      });
      return i;
    });
    this.deps.sender.poke();
    return invitationView(invitation, now);
  }

  async list(tenantId: string, orgId: string, before: string | undefined, limit: number) {
    const r = reposOf(this.deps);
    await this.#organization(r, tenantId, orgId);
    const now = this.deps.clock.now();
    return (await r.invitations.list(tenantId, orgId, before, limit)).map((i) => invitationView(i, now));
  }

  async #find(r: Repos, tenantId: string, orgId: string, id: string) {
    const i = await r.invitations.find(tenantId, orgId, id);
    if (!i) throw errors.notFound('invitation not found');
    return i;
  }

  /** A new link (the earlier one stops working), valid for the invitation's expires_in from now; also for an expired invitation. */
  async resend(tenant: Tenant, actor: Actor, orgId: string, id: string) {
    const now = this.deps.clock.now();
    const token = newSecret(TOKEN_PREFIX);
    const renewed = await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      const org = await this.#organization(r, tenant.id, orgId);
      const i = await this.#find(r, tenant.id, orgId, id);
      const expiresAt = now + i.ttlSeconds * 1000;
      if (!(await r.invitations.renew(tenant.id, id, sha256Hex(token), now, expiresAt)))
        throw errors.conflict(`the invitation was already ${statusOf(i, now)}`);
      await this.#send(trx, tenant, { email: i.email, organizationName: org.name }, token);
      await this.deps.events.record(trx, {
        tenantId: tenant.id,
        type: 'invitation.resent',
        organizationId: orgId,
        actor,
        data: { invitation_id: id, organization_id: orgId, email: i.email, expires_at: iso(expiresAt) },
      });
      return { ...i, sentAt: now, expiresAt };
    });
    this.deps.sender.poke();
    return invitationView(renewed, now);
  }

  async revoke(tenantId: string, actor: Actor, orgId: string, id: string): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      const i = await this.#find(r, tenantId, orgId, id);
      if (!(await r.invitations.revoke(tenantId, id, now))) throw errors.conflict(`the invitation was already ${statusOf(i, now)}`);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'invitation.revoked',
        organizationId: orgId,
        actor,
        data: { invitation_id: id, organization_id: orgId, email: i.email },
      });
    });
  }

  // ---------------------------------------------------------------- the accept page

  /** The invitation a link names, if it can still be accepted; else a 400 saying why (unknown, revoked, accepted, expired). */
  async open(tenantId: string, token: string, trx?: Executor): Promise<OpenInvitation> {
    if (!TOKEN_SHAPE.test(token)) throw errors.invalidRequest(INVITATION_INVALID);
    const r = reposOf(this.deps, trx);
    const invitation = await r.invitations.findByToken(tenantId, sha256Hex(token));
    if (!invitation) throw errors.invalidRequest(INVITATION_INVALID);
    const status = statusOf(invitation, this.deps.clock.now());
    if (status === 'revoked') throw errors.invalidRequest(INVITATION_REVOKED);
    if (status === 'accepted') throw errors.invalidRequest(INVITATION_USED);
    if (status === 'expired') throw errors.invalidRequest(INVITATION_EXPIRED);
    const org = await r.organizations.find(tenantId, invitation.organizationId);
    if (!org) throw errors.invalidRequest(INVITATION_INVALID);
    return { invitation, organizationName: org.name, account: await r.users.findByEmail(tenantId, invitation.email) };
  }

  /** A signed-in user accepts: only the account with the invited address may. */
  async accept(tenantId: string, token: string, userId: string): Promise<OpenInvitation> {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const opened = await this.open(tenantId, token, trx);
      const user = await reposOf(this.deps, trx).users.find(tenantId, userId);
      if (!user || user.email !== opened.invitation.email) throw errors.forbidden(INVITATION_OTHER_EMAIL);
      await this.#join(trx, opened.invitation, token, user);
      return opened;
    });
  }

  /**
   * The invitee has no account: one is made with this password, verified (the link proved the
   * address), made a member and signed in, all in one transaction with the invitation's use.
   */
  async acceptAsNewUser(tenantId: string, token: string, input: { password: string }, signIn: InvitationSignIn): Promise<OpenInvitation> {
    const opened = await this.open(tenantId, token);
    if (opened.account) throw errors.conflict(INVITATION_HAS_ACCOUNT);
    if (input.password.length < 8 || input.password.length > 256) throw errors.invalidRequest(PASSWORD_LENGTH);
    await this.deps.users.create(tenantId, SYSTEM, { email: opened.invitation.email, password: input.password }, async (trx, user) => {
      const now = this.deps.clock.now();
      await this.#join(trx, opened.invitation, token, user);
      const s = await signIn(trx, user, now);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'login.succeeded',
        organizationId: null,
        actor: { type: 'user', id: user.id },
        data: { user_id: user.id, session_id: s.sessionId, ip: s.ip, method: 'invitation', ...(s.pending ? { second_factor_pending: true } : {}) },
      });
    });
    return opened;
  }

  /** Uses the invitation (once) and makes `user` a member with its roles (those still usable in the organization, else the default role). */
  async #join(trx: Executor, i: InvitationRecord, token: string, user: UserRecord): Promise<void> {
    const now = this.deps.clock.now();
    const r = reposOf(this.deps, trx);
    // Two tabs racing: only one moves the invitation; the other sees it as accepted.
    if (!(await r.invitations.accept(i.tenantId, i.id, sha256Hex(token), user.id, now))) throw errors.invalidRequest(INVITATION_USED);
    const actor: Actor = { type: 'user', id: user.id };
    if (!user.emailVerified) {
      await r.users.setEmailVerified(i.tenantId, user.id, now);
      await this.deps.events.record(trx, {
        tenantId: i.tenantId,
        type: 'user.email_verified',
        organizationId: null,
        actor,
        data: { user_id: user.id, via: 'invitation' },
      });
    }
    const member = await r.members.find(i.tenantId, i.organizationId, user.id);
    if (!member) {
      const usable = await r.roles.usableIn(i.tenantId, i.organizationId);
      const kept = i.roles.filter((k) => usable.has(k));
      const roles = kept.length > 0 ? kept : [await r.roles.defaultRole(i.tenantId)];
      await r.members.insert({
        tenantId: i.tenantId,
        organizationId: i.organizationId,
        userId: user.id,
        role: roles[0]!,
        roles,
        createdAt: now,
        updatedAt: now,
      });
      await this.deps.events.record(trx, {
        tenantId: i.tenantId,
        type: 'member.added',
        organizationId: i.organizationId,
        actor,
        data: { organization_id: i.organizationId, user_id: user.id, role: roles[0]!, roles, invitation_id: i.id },
      });
    }
    await this.deps.events.record(trx, {
      tenantId: i.tenantId,
      type: 'invitation.accepted',
      organizationId: i.organizationId,
      actor,
      data: { invitation_id: i.id, organization_id: i.organizationId, user_id: user.id, email: i.email, already_member: member !== undefined },
    });
  }
}
