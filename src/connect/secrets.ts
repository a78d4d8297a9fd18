/**
 * Vault secrets at rest, each under envelope encryption (AES-256-GCM) with a context naming the
 * tenant and the row, so a ciphertext copied to another row does not decrypt.
 */
import type { Envelope } from '../kernel/crypto/envelope.js';

export type TokenKind = 'access' | 'refresh';

export const sealClientSecret = (e: Envelope, tenantId: string, providerId: string, secret: string) =>
  e.encrypt(secret, `connect_provider_secret:${tenantId}:${providerId}`);
export const openClientSecret = (e: Envelope, p: { tenantId: string; id: string; clientSecretEnc: string | null }) =>
  p.clientSecretEnc === null ? null : e.decrypt(p.clientSecretEnc, `connect_provider_secret:${p.tenantId}:${p.id}`);

export const sealVerifier = (e: Envelope, tenantId: string, stateHash: string, verifier: string) =>
  e.encrypt(verifier, `connect_flow:${tenantId}:${stateHash}`);
export const openVerifier = (e: Envelope, t: { tenantId: string; stateHash: string; secretsEnc: string }) =>
  e.decrypt(t.secretsEnc, `connect_flow:${t.tenantId}:${t.stateHash}`);

export const sealToken = (e: Envelope, tenantId: string, accountId: string, kind: TokenKind, token: string) =>
  e.encrypt(token, `connected_account:${tenantId}:${accountId}:${kind}`);
export const openToken = (e: Envelope, tenantId: string, accountId: string, kind: TokenKind, sealed: string) =>
  e.decrypt(sealed, `connected_account:${tenantId}:${accountId}:${kind}`);
