/** Invitations to an organization (issue 29 point 5, migration 0044, src/management/invitations/). */
export interface OrganizationInvitationsTable {
  /** inv_… */
  id: string;
  tenant_id: string;
  organization_id: string;
  /** The invitee's address (normalised): only an account with it may accept. */
  email: string;
  /** JSON array of role keys, given at acceptance. */
  roles: string;
  /** SHA-256 hex of the link's secret (`ivt_…`); a resend replaces it. */
  token_hash: string;
  /** How long each sent link works (expires_in); a resend starts it again. */
  ttl_seconds: number;
  /** JSON of the actor that invited ({type, id}). */
  invited_by: string;
  created_at: number;
  /** When the latest link was sent. */
  sent_at: number;
  expires_at: number;
  accepted_at: number | null;
  /** The user who accepted. */
  accepted_by: string | null;
  revoked_at: number | null;
}

export interface InvitationTables {
  organization_invitations: OrganizationInvitationsTable;
}
