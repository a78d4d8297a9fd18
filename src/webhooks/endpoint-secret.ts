/**
 * A webhook endpoint's signing secret at rest: envelope-encrypted under a context naming the
 * tenant and the endpoint, so a ciphertext copied to another endpoint's row does not decrypt.
 */
import type { Envelope } from '../kernel/crypto/envelope.js';

const context = (tenantId: string, endpointId: string) => `webhook_secret:${tenantId}:${endpointId}`;

export function sealEndpointSecret(envelope: Envelope, endpoint: { tenantId: string; id: string }, secret: string): string {
  return envelope.encrypt(secret, context(endpoint.tenantId, endpoint.id));
}

/** Throws EnvelopeError when the ciphertext does not belong to this endpoint or key. */
export function openEndpointSecret(envelope: Envelope, endpoint: { tenantId: string; id: string; secretEnc: string }): string {
  return envelope.decrypt(endpoint.secretEnc, context(endpoint.tenantId, endpoint.id));
}
