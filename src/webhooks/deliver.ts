import { request } from 'undici';
import type { Clock } from '../kernel/clock.js';
import { checkEgressUrlShape } from '../egress/url.js';
import type { EgressAgent } from '../egress/agent.js';
import { isEgressRefusedError } from '../egress/policy.js';
import { KEYHALL_VERSION } from '../kernel/version.js';

/**
 * One webhook delivery attempt: a POST of exact bytes through the egress agent, under a total
 * time limit, reporting a result instead of throwing. Scheduling, retries and the delivery log
 * belong to the dispatcher; this is the part that touches the network.
 */

/** Every attempt names its sender, so receivers and their firewalls can tell Keyhall's calls apart. */
export const WEBHOOK_USER_AGENT = `Keyhall-Webhooks/${KEYHALL_VERSION}`;

/** Most of a receiver's answer kept for the delivery log; the rest is never read. */
export const MAX_LOGGED_RESPONSE_BYTES = 4096;

export interface DeliveryAttempt {
  /** The endpoint URL as stored (already checked at registration; re-checked here). */
  url: string;
  /** The exact body; sent as UTF-8, byte-identical on every attempt of one delivery. */
  body: string;
  /** `webhook-id`, `webhook-event`, `webhook-signature`, …; `content-type` and `user-agent` are always Keyhall's. */
  headers: Record<string, string>;
  /** The body's media type (default `application/json`; back-channel logout sends a form). */
  contentType?: string;
  /** Who is calling (default the webhooks' `Keyhall-Webhooks/<version>`). */
  userAgent?: string;
  /** Total limit for resolving, connecting, sending, the status line and the (bounded) body. */
  timeoutMs: number;
  /** The egress-guarded dispatcher (createEgressAgent). */
  agent: EgressAgent;
  /** Measures `durationMs` (the time limit itself runs on real timers). */
  clock: Clock;
  /** How much of the response body to keep (default 4096 bytes). */
  maxResponseBytes?: number;
  /** Abandons the attempt (the instance is shutting down): the result is `abandoned`. */
  signal?: AbortSignal;
}

export interface DeliveryResult {
  /** True only for a 2xx whose answer (up to the logged prefix) arrived within the time limit. */
  ok: boolean;
  /** The receiver's status code, when one arrived. */
  status?: number;
  /**
   * Why the attempt failed: `timeout`, `redirect not followed`, `status <code>`,
   * `refused: <egress reason>` or `connection failed: <code>`.
   */
  error?: string;
  durationMs: number;
  /** Up to `maxResponseBytes` of the response body (UTF-8, possibly cut), for the delivery log. */
  responseBody?: string;
  /** The attempt was abandoned through `signal`: it has no outcome to record. */
  abandoned?: true;
}

const statusError = (status: number): string | undefined =>
  status >= 200 && status < 300 ? undefined : status >= 300 && status < 400 ? 'redirect not followed' : `status ${status}`;

function networkError(err: unknown): string {
  if (isEgressRefusedError(err)) return `refused: ${err.reason}`;
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  if (typeof code === 'string' && code !== '') return `connection failed: ${code}`;
  return 'connection failed';
}

/** Makes one attempt. Never throws for network conditions: every outcome is a DeliveryResult. */
export async function attemptDelivery(attempt: DeliveryAttempt): Promise<DeliveryResult> {
  const { clock, timeoutMs } = attempt;
  const limit = attempt.maxResponseBytes ?? MAX_LOGGED_RESPONSE_BYTES;
  const started = clock.now();
  const done = (r: Omit<DeliveryResult, 'durationMs'>): DeliveryResult => ({ ...r, durationMs: Math.max(0, clock.now() - started) });

  // The shape is re-checked on every attempt; a host name's addresses are judged by the agent as it connects.
  const shape = checkEgressUrlShape(attempt.url, attempt.agent.policy);
  if (!shape.ok) return done({ ok: false, error: `refused: ${shape.reason}` });

  // The limit covers everything. undici only honours an abort once a connection exists, so the
  // attempt races a deadline of its own; the abandoned exchange is aborted and settles quietly.
  const controller = new AbortController();
  const seen: Progress = { chunks: [], kept: 0 };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let abandon = () => {};
  const deadline = new Promise<'timeout' | 'abandoned'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    abandon = () => resolve('abandoned');
  });
  if (attempt.signal?.aborted) abandon();
  attempt.signal?.addEventListener('abort', abandon);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(attempt.headers)) headers[name.toLowerCase()] = value;
  headers['content-type'] = attempt.contentType ?? 'application/json';
  headers['user-agent'] = attempt.userAgent ?? WEBHOOK_USER_AGENT;
  const exchange = exchangeOnce(shape.url, attempt, headers, controller.signal, limit, seen).then(
    () => null,
    (err: unknown) => ({ err }),
  );
  try {
    const outcome = await Promise.race([exchange, deadline]);
    const responseBody = seen.status !== undefined ? Buffer.concat(seen.chunks).toString('utf8') : undefined;
    const logged = { ...(seen.status !== undefined ? { status: seen.status } : {}), ...(responseBody !== undefined ? { responseBody } : {}) };
    if (outcome === 'abandoned') return done({ ok: false, abandoned: true });
    if (outcome === 'timeout') return done({ ok: false, ...logged, error: 'timeout' });
    if (outcome !== null) return done({ ok: false, ...logged, error: networkError(outcome.err) });
    const error = statusError(seen.status as number);
    return done({ ok: error === undefined, ...logged, ...(error ? { error } : {}) });
  } finally {
    clearTimeout(timer);
    attempt.signal?.removeEventListener('abort', abandon);
    controller.abort(new Error('delivery attempt over'));
  }
}

interface Progress {
  status?: number;
  chunks: Buffer[];
  kept: number;
}

/** POSTs and reads at most `limit` bytes of the answer into `seen`; leaving early destroys the stream. */
async function exchangeOnce(
  url: string,
  attempt: DeliveryAttempt,
  headers: Record<string, string>,
  signal: AbortSignal,
  limit: number,
  seen: Progress,
): Promise<void> {
  const res = await request(url, {
    method: 'POST',
    dispatcher: attempt.agent,
    headers,
    body: Buffer.from(attempt.body, 'utf8'),
    signal,
  });
  seen.status = res.statusCode;
  if (limit <= 0) {
    res.body.destroy();
    return;
  }
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    const part = chunk.subarray(0, limit - seen.kept);
    seen.chunks.push(part);
    seen.kept += part.length;
    if (seen.kept >= limit) break;
  }
}
