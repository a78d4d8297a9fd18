/**
 * How every upstream identity provider is reached: egress/fetch (the URL checked against the
 * egress policy, every address checked as the guarded agent connects, no redirects) with the
 * upstream limits, adapted to the fetch signature the OAuth library takes.
 */
import type { EgressAgent } from '../egress/agent.js';
import { asResponse, egressFetch } from '../egress/fetch.js';
import type { EgressPolicy, EgressResolver } from '../egress/policy.js';

/** The largest upstream answer read (discovery, token, JWKS, userinfo and metadata documents are a few KiB). */
export const MAX_UPSTREAM_BYTES = 256 * 1024;

/** What reaching an upstream needs: the guarded agent, its policy, the resolver registration checks use, the time limit. */
export interface UpstreamHttp {
  agent: EgressAgent;
  policy: EgressPolicy;
  resolver?: EgressResolver;
  /** The limit of one upstream request (KEYHALL_UPSTREAM_TIMEOUT_MS). */
  timeoutMs: number;
}

export interface UpstreamRequest {
  method?: string;
  headers?: Record<string, string> | Headers;
  body?: string | URLSearchParams | null;
  signal?: AbortSignal | null;
}

/** One upstream request within the limits, as a WHATWG Response. */
export async function upstreamFetch(http: UpstreamHttp, url: string | URL, init: UpstreamRequest = {}): Promise<Response> {
  const headers = init.headers instanceof Headers ? Object.fromEntries(init.headers.entries()) : init.headers;
  const res = await egressFetch(http.agent, url, {
    method: init.method === 'POST' ? 'POST' : 'GET',
    ...(headers ? { headers } : {}),
    ...(init.body !== undefined && init.body !== null ? { body: String(init.body) } : {}),
    maxBytes: MAX_UPSTREAM_BYTES,
    timeoutMs: http.timeoutMs,
    policy: http.policy,
    signal: init.signal ?? null,
  });
  return asResponse(res);
}
