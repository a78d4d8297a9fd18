/**
 * The one bounded outbound fetch (webhooks aside, which stream their own deliveries): client
 * metadata documents, client `jwks_uri`, upstream identity providers (discovery, token, JWKS,
 * userinfo, revocation) and SAML metadata all read through it. The URL's shape is checked against
 * the egress policy first; the connection goes through the guarded egress agent (every address
 * connected to is checked); the answer is read up to `maxBytes`, the whole exchange within
 * `timeoutMs`; a redirect is refused, never followed. Every failure is an EgressFetchError
 * whose `kind` says which limit or rule stopped it.
 */
import { request } from 'undici';
import type { EgressAgent } from './agent.js';
import { isEgressRefusedError, type EgressPolicy } from './policy.js';
import { checkEgressUrlShape } from './url.js';

/**
 * Why a fetch failed: `refused` (the egress policy: the URL's shape or an address connected to),
 * `too_large` (more than `maxBytes`), `timeout` (no whole answer within `timeoutMs`), `redirect`
 * (a 3xx answer: redirects are not followed) or `network` (DNS, TCP, TLS, a reset).
 */
export type EgressFetchFailure = 'refused' | 'too_large' | 'timeout' | 'redirect' | 'network';

export class EgressFetchError extends Error {
  override name = 'EgressFetchError';
  constructor(
    readonly kind: EgressFetchFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface EgressFetchOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The largest answer read, in bytes. */
  maxBytes: number;
  /** The limit for the whole exchange, from connecting to the answer's last byte. */
  timeoutMs: number;
  /** The policy the URL's shape is checked against; the agent's by default. */
  policy?: EgressPolicy;
  /** Aborts the fetch early (a caller's own signal); the time limit applies regardless. */
  signal?: AbortSignal | null;
}

/** A whole answer, read within the limits. */
export interface EgressResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

const TIMED_OUT = Symbol('egress fetch timed out');

function headersOf(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

async function readLimited(body: AsyncIterable<Buffer>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new EgressFetchError('too_large', `the upstream answer exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** What went wrong, as one of the kinds, with the innermost cause's words. */
function classify(err: unknown, timedOut: boolean, timeoutMs: number): EgressFetchError {
  if (err instanceof EgressFetchError) return err;
  if (timedOut) return new EgressFetchError('timeout', `no answer within ${timeoutMs} ms`, { cause: err });
  let inner = err as { message?: string; cause?: unknown } | undefined;
  for (let depth = 0; depth < 4 && inner !== undefined; depth++) {
    if (isEgressRefusedError(inner)) return new EgressFetchError('refused', `refused by the egress policy (${(inner as Error).message})`, { cause: err });
    if (!(inner.cause instanceof Error)) break;
    inner = inner.cause as { message?: string; cause?: unknown };
  }
  return new EgressFetchError('network', inner?.message ?? String(err), { cause: err });
}

/** Fetches `url` within the limits; see the module comment. */
export async function egressFetch(agent: EgressAgent, url: string | URL, opts: EgressFetchOptions): Promise<EgressResponse> {
  const shape = checkEgressUrlShape(String(url), opts.policy ?? agent.policy);
  if (!shape.ok) throw new EgressFetchError('refused', `refused by the egress policy (${shape.reason})`);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(TIMED_OUT), opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([controller.signal, opts.signal]) : controller.signal;
  try {
    const res = await request(shape.url, { method: opts.method ?? 'GET', dispatcher: agent, headers: opts.headers, body: opts.body, signal });
    if (res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304) {
      await res.body.dump();
      throw new EgressFetchError('redirect', `answered ${res.statusCode}, a redirect, which is not followed`);
    }
    const body = await readLimited(res.body as AsyncIterable<Buffer>, opts.maxBytes);
    return { status: res.statusCode, headers: headersOf(res.headers), body };
  } catch (err) {
    throw classify(err, controller.signal.aborted, opts.timeoutMs);
  } finally {
    clearTimeout(timer);
  }
}

/** The answer as a WHATWG Response, for protocol libraries that take a fetch (oauth4webapi). */
export function asResponse(res: EgressResponse): Response {
  const nullBody = res.status === 204 || res.status === 304;
  return new Response(nullBody ? null : new Uint8Array(res.body), { status: res.status, headers: res.headers });
}
