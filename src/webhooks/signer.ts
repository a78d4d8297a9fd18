import { createHmac } from 'node:crypto';
import { safeEqual } from '../kernel/crypto/hash.js';
import { newSecret } from '../kernel/ids.js';

/**
 * Webhook signatures (spec "Events → Delivery"): header
 * `webhook-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 * The HMAC key is the whole secret string, prefix included, as UTF-8 bytes, which is what
 * Stripe's verifier (`stripe.webhooks.constructEvent`) does with the same header format.
 */

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

/** A new endpoint secret: `whsec_` + base64url of 32 random bytes. Shown once, stored encrypted. */
export function newWebhookSecret(): string {
  return newSecret(WEBHOOK_SECRET_PREFIX);
}

/** Hex HMAC-SHA256 of `<t>.<body>` under the secret. */
export function computeSignature(secret: string, body: string | Uint8Array, unixSeconds: number): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${unixSeconds}.`, 'utf8');
  return (typeof body === 'string' ? mac.update(body, 'utf8') : mac.update(body)).digest('hex');
}

/**
 * The `webhook-signature` value for one attempt. Several secrets give several `v1` entries (for a
 * secret rotated in place, should that ever be offered); the spec's rotation uses one secret per endpoint.
 */
export function signWebhook(secret: string | readonly string[], body: string | Uint8Array, unixSeconds: number): string {
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) throw new RangeError('unixSeconds must be a non-negative integer');
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new RangeError('at least one secret is needed');
  return [`t=${unixSeconds}`, ...secrets.map((s) => `v1=${computeSignature(s, body, unixSeconds)}`)].join(',');
}

/** The headers of one attempt besides content-type: `webhook-id` stays, `t` is fresh each time. */
export function webhookHeaders(input: {
  deliveryId: string;
  eventType: string;
  secret: string | readonly string[];
  body: string;
  nowSeconds: number;
}): Record<string, string> {
  return {
    'webhook-id': input.deliveryId,
    'webhook-event': input.eventType,
    'webhook-signature': signWebhook(input.secret, input.body, input.nowSeconds),
  };
}

export type SignatureVerification =
  { ok: true; timestamp: number } | { ok: false; reason: 'malformed_header' | 'timestamp_out_of_tolerance' | 'no_matching_signature' };

const TIMESTAMP = /^\d{1,12}$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * The reference verifier (for tests and the docs' receiver example). Checks, on the raw body
 * (the bytes received, before any JSON parsing):
 * exactly one `t`, within `toleranceSeconds` of `nowSeconds` either way, and at least one `v1`
 * matching under any of the given secrets (constant-time compare). Unknown schemes are ignored.
 */
export function verifyWebhookSignature(
  secret: string | readonly string[],
  header: string | undefined | null,
  rawBody: string | Uint8Array,
  nowSeconds: number,
  toleranceSeconds: number = DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
): SignatureVerification {
  if (typeof header !== 'string' || header.length > 8192) return { ok: false, reason: 'malformed_header' };
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) return { ok: false, reason: 'malformed_header' };
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !TIMESTAMP.test(value)) return { ok: false, reason: 'malformed_header' };
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (HEX_SHA256.test(value)) candidates.push(value);
    }
  }
  if (timestamp === undefined || candidates.length === 0) return { ok: false, reason: 'malformed_header' };
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return { ok: false, reason: 'timestamp_out_of_tolerance' };
  const secrets = typeof secret === 'string' ? [secret] : secret;
  let matched = false;
  for (const s of secrets) {
    const expected = computeSignature(s, rawBody, timestamp);
    // Compare against every candidate, without stopping early.
    for (const candidate of candidates) matched = safeEqual(candidate, expected) || matched;
  }
  return matched ? { ok: true, timestamp } : { ok: false, reason: 'no_matching_signature' };
}
