import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../schema.js';
import type { OrganizationInvitationsTable } from '../tables/invitations.js';

export interface InvitationRecord {
  id: string;
  tenantId: string;
  organizationId: string;
  email: string;
  roles: string[];
  ttlSeconds: number;
  invitedBy: { type: string; id: string | null };
  createdAt: number;
  sentAt: number;
  expiresAt: number;
  acceptedAt: number | null;
  acceptedBy: string | null;
  revokedAt: number | null;
}

const nOrNull = (v: number | string | null) => (v === null ? null : Number(v));

const toRecord = (r: Selectable<OrganizationInvitationsTable>): InvitationRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  organizationId: r.organization_id,
  email: r.email,
  roles: JSON.parse(r.roles) as string[],
  ttlSeconds: Number(r.ttl_seconds),
  invitedBy: JSON.parse(r.invited_by) as InvitationRecord['invitedBy'],
  createdAt: Number(r.created_at),
  sentAt: Number(r.sent_at),
  expiresAt: Number(r.expires_at),
  acceptedAt: nOrNull(r.accepted_at),
  acceptedBy: r.accepted_by,
  revokedAt: nOrNull(r.revoked_at),
});

/**
 * Invitations to an organization (migration 0044). The link's secret is stored only as SHA-256
 * and found by it; accepting, revoking and resending move a pending row by compare-and-set, so an
 * invitation is used once however many requests race for it.
 */
export class InvitationRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(i: Omit<InvitationRecord, 'acceptedAt' | 'acceptedBy' | 'revokedAt'>, tokenHash: string): Promise<void> {
    await this.db
      .insertInto('organization_invitations')
      .values({
        id: i.id,
        tenant_id: i.tenantId,
        organization_id: i.organizationId,
        email: i.email,
        roles: JSON.stringify(i.roles),
        token_hash: tokenHash,
        ttl_seconds: i.ttlSeconds,
        invited_by: JSON.stringify(i.invitedBy),
        created_at: i.createdAt,
        sent_at: i.sentAt,
        expires_at: i.expiresAt,
        accepted_at: null,
        accepted_by: null,
        revoked_at: null,
      })
      .execute();
  }

  async find(tenantId: string, organizationId: string, id: string): Promise<InvitationRecord | undefined> {
    const row = await this.db
      .selectFrom('organization_invitations')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async findByToken(tenantId: string, tokenHash: string): Promise<InvitationRecord | undefined> {
    const row = await this.db
      .selectFrom('organization_invitations')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, token_hash: tokenHash }))
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** A pending (neither accepted nor revoked, not expired) invitation of this address to this organization. */
  async findPending(tenantId: string, organizationId: string, email: string, now: number): Promise<InvitationRecord | undefined> {
    const row = await this.db
      .selectFrom('organization_invitations')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, email }))
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Newest first; `before` is the last id of the previous page. */
  async list(tenantId: string, organizationId: string, before: string | undefined, limit: number): Promise<InvitationRecord[]> {
    let q = this.db
      .selectFrom('organization_invitations')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId }));
    if (before) q = q.where('id', '<', before);
    return (await q.orderBy('id', 'desc').limit(limit).execute()).map(toRecord);
  }

  /** A new link for a pending invitation (resend): the old secret stops working. False when it is no longer pending. */
  async renew(tenantId: string, id: string, tokenHash: string, now: number, expiresAt: number): Promise<boolean> {
    const r = await this.db
      .updateTable('organization_invitations')
      .set({ token_hash: tokenHash, sent_at: now, expires_at: expiresAt })
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async revoke(tenantId: string, id: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('organization_invitations')
      .set({ revoked_at: now })
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Uses the invitation once: true only for the one request that moved it from pending while its link was live. */
  async accept(tenantId: string, id: string, tokenHash: string, userId: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('organization_invitations')
      .set({ accepted_at: now, accepted_by: userId })
      .where((eb) => eb.and({ tenant_id: tenantId, id, token_hash: tokenHash }))
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
