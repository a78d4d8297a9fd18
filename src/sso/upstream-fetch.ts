/**
 * Requests to an organization's identity provider (OIDC token endpoint and JWKS, SAML metadata):
 * through the egress agent (every address connected to is checked; no redirects), within a time
 * limit, reading at most MAX_UPSTREAM_BYTES of the answer.
 */
import { fetch as undiciFetch } from 'undici';
import type { EgressAgent } from '../egress/agent.js';
import type { EgressPolicy, EgressResolver } from '../egress/policy.js';

/** Upstream requests are given this long. */
export const UPSTREAM_TIMEOUT_SECONDS = 10;

/** The largest upstream answer read (discovery, token, JWKS and metadata documents are a few KiB). */
export const MAX_UPSTREAM_BYTES = 256 * 1024;

export interface UpstreamHttp {
  agent: EgressAgent;
  policy: EgressPolicy;
  resolver?: EgressResolver;
}

export class UpstreamTooLargeError extends Error {
  constructor() {
    super(`the upstream answer exceeds ${MAX_UPSTREAM_BYTES} bytes`);
  }
}

export interface UpstreamRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal | null;
}

/** A fetch through the egress agent that reads at most MAX_UPSTREAM_BYTES. */
export async function upstreamFetch(agent: EgressAgent, url: string | URL, options: UpstreamRequest = {}): Promise<Response> {
  const res = await undiciFetch(url, {
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    redirect: 'manual',
    signal: options.signal ?? AbortSignal.timeout(UPSTREAM_TIMEOUT_SECONDS * 1000),
    dispatcher: agent,
  });
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body) {
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > MAX_UPSTREAM_BYTES) throw new UpstreamTooLargeError();
      chunks.push(chunk);
    }
  }
  const body = res.status === 204 || res.status === 304 ? null : Buffer.concat(chunks);
  return new Response(body, { status: res.status, statusText: res.statusText, headers: Object.fromEntries(res.headers.entries()) });
}
