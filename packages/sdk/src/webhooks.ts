/**
 * Webhook signature verification (docs/webhooks.md, "Signatures"):
 * `webhook-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed by the
 * whole endpoint secret as UTF-8 (`whsec_` included). Web Crypto only, so it runs on Node, Deno
 * and Bun.
 */

/** A delivery's envelope (docs/events.md). */
export interface WebhookEvent<T = unknown> {
  id: string;
  type: string;
  created: number;
  organization_id: string;
  data: T;
}

/** A verified delivery: the parsed event, and the `webhook-id` to deduplicate on. */
export interface VerifiedWebhook<T = unknown> {
  /** The delivery id, the same on every retry of this delivery: deduplicate on it. */
  webhookId: string;
  /** The signature's timestamp (unix seconds). */
  timestamp: number;
  event: WebhookEvent<T>;
}

export type WebhookFailure = 'malformed_header' | 'timestamp_out_of_tolerance' | 'no_matching_signature' | 'malformed_body';

/** A delivery that must not be trusted; `reason` says why (the codes of Keyhall's own verifier). */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(readonly reason: WebhookFailure) {
    super(`webhook refused: ${reason}`);
  }
}

export interface VerifyWebhookOptions {
  /** How far the signature's timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time in milliseconds (default `Date.now()`). */
  now?: () => number;
}

/** Request headers as Node (`req.headers`), the Fetch API (`Headers`) or a plain record give them. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(',') : value;
}

const encoder = new TextEncoder();

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Compares two equal-length byte strings without an early exit. */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

async function hmac(secret: string, t: string, raw: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const prefix = encoder.encode(`${t}.`);
  const message = new Uint8Array(prefix.length + raw.length);
  message.set(prefix);
  message.set(raw, prefix.length);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
}

/**
 * Verifies a delivery and returns its event. `rawBody` is the body exactly as received (verify
 * before parsing JSON); `secret` may be a list during a rotation (`[newSecret, oldSecret]`).
 * Throws `WebhookVerificationError` when the delivery must be refused.
 */
export async function verifyWebhook<T = unknown>(
  rawBody: string | Uint8Array,
  headers: HeaderSource,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<VerifiedWebhook<T>> {
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  const value = header(headers, 'webhook-signature');
  if (!value || value.length > 8192) throw new WebhookVerificationError('malformed_header');
  // Exactly one `t`; every `v1` of 64 hex digits is a candidate; other schemes are ignored.
  let t: string | undefined;
  const signatures: Uint8Array[] = [];
  for (const item of value.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new WebhookVerificationError('malformed_header');
    const key = item.slice(0, eq).trim();
    const v = item.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined || !/^\d{1,12}$/.test(v)) throw new WebhookVerificationError('malformed_header');
      t = v;
    } else if (key === 'v1' && /^[0-9a-f]{64}$/.test(v)) {
      signatures.push(hexToBytes(v));
    }
  }
  if (t === undefined || signatures.length === 0) throw new WebhookVerificationError('malformed_header');
  if (Math.abs(now - Number(t)) > tolerance) throw new WebhookVerificationError('timestamp_out_of_tolerance');
  const raw = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  let matched = false;
  for (const s of typeof secret === 'string' ? [secret] : secret) {
    const expected = await hmac(s, t, raw);
    for (const sig of signatures) matched = equalBytes(sig, expected) || matched;
  }
  if (!matched) throw new WebhookVerificationError('no_matching_signature');
  let event: WebhookEvent<T>;
  try {
    event = JSON.parse(new TextDecoder().decode(raw)) as WebhookEvent<T>;
  } catch {
    throw new WebhookVerificationError('malformed_body');
  }
  return { webhookId: header(headers, 'webhook-id') ?? '', timestamp: Number(t), event };
}
