import type { Envelope } from '../kernel/crypto/envelope.js';

/**
 * A connection's client secret under envelope encryption, bound to its tenant and connection
 * (a ciphertext copied to another row does not decrypt).
 */
const context = (tenantId: string, connectionId: string) => `sso_secret:${tenantId}:${connectionId}`;

export const sealConnectionSecret = (envelope: Envelope, tenantId: string, connectionId: string, secret: string) =>
  envelope.encrypt(secret, context(tenantId, connectionId));

export const openConnectionSecret = (envelope: Envelope, tenantId: string, connectionId: string, sealed: string) =>
  envelope.decrypt(sealed, context(tenantId, connectionId));
