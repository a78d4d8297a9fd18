/** Records of the credential issuer (docs/credentials.md); src/storage/repos/credentials.ts stores them. */

export const CLAIM_TYPES = ['string', 'number', 'boolean'] as const;
export type ClaimType = (typeof CLAIM_TYPES)[number];

export interface ClaimSpec {
  type: ClaimType;
  mandatory: boolean;
  display_name?: string | undefined;
}

/** A credential configuration: the built-in OrganizationMembership or a tenant's own type. */
export interface CredentialTypeRecord {
  tenantId: string;
  /** The credential_configuration_id. */
  id: string;
  vct: string;
  displayName: string;
  claims: Record<string, ClaimSpec>;
  lifetimeSeconds: number;
  createdAt: number;
}

export const TX_CODE_INPUT_MODES = ['numeric', 'text'] as const;
export type TxCodeInputMode = (typeof TX_CODE_INPUT_MODES)[number];

/** pending: the code may be redeemed; redeemed: a token was issued; issued: the credential too; dead: expired or too many wrong tx_codes. */
export type OfferState = 'pending' | 'redeemed' | 'issued' | 'dead';

export interface CredentialOfferRecord {
  id: string;
  tenantId: string;
  organizationId: string;
  configurationId: string;
  userId: string | null;
  claims: Record<string, unknown> | null;
  codeHash: string;
  /** The code under envelope encryption (the offer served by reference carries it). */
  codeEnc: string;
  refHash: string;
  txCodeHash: string | null;
  txCodeLength: number | null;
  txCodeInputMode: TxCodeInputMode | null;
  failedAttempts: number;
  state: OfferState;
  expiresAt: number;
  createdAt: number;
  redeemedAt: number | null;
}

export type CredentialStatus = 'valid' | 'revoked';

export interface IssuedCredentialRecord {
  id: string;
  tenantId: string;
  organizationId: string;
  offerId: string;
  configurationId: string;
  vct: string;
  format: string;
  /** The holder's DID (did:key or did:jwk of the proof key). */
  subject: string;
  userId: string | null;
  status: CredentialStatus;
  statusListId: string;
  statusIndex: number;
  statusUri: string;
  issuedAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

export interface StatusListRecord {
  id: string;
  tenantId: string;
  size: number;
  allocated: number;
  version: number;
  signedJwt: string | null;
  signedVersion: number | null;
  signedUntil: number | null;
  createdAt: number;
}
