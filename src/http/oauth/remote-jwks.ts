/**
 * Client keys at `jwks_uri`, fetched through the egress agent (every address it connects to is
 * checked; no redirects), with a size and time limit, and cached per instance. A set lacking the
 * key an assertion names is fetched again at most once per `minRefreshMs` (key rotation).
 */
import type { JWK } from 'jose';
import { isPublicJwk } from '../../oauth/jwk.js';
import type { RemoteKeySource } from '../../oauth/types.js';
import type { EgressAgent } from '../../egress/agent.js';
import { egressFetch, EgressFetchError } from '../../egress/fetch.js';
import type { EgressPolicy } from '../../egress/policy.js';

export interface RemoteJwksOptions {
  ttlMs: number;
  minRefreshMs: number;
  timeoutMs: number;
  maxBytes: number;
}

const DEFAULTS: RemoteJwksOptions = { ttlMs: 5 * 60_000, minRefreshMs: 30_000, timeoutMs: 5_000, maxBytes: 64 * 1024 };

export class RemoteJwksError extends Error {}

interface CacheEntry {
  at: number;
  keys: Promise<{ keys: JWK[] }>;
  failed: boolean;
}

const MAX_ENTRIES = 10_000;

/** Public keys only: a private or symmetric key is dropped, never used. */
function parseJwks(text: string): { keys: JWK[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new RemoteJwksError('jwks_uri did not return JSON');
  }
  const keys = (doc as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) throw new RemoteJwksError('jwks_uri did not return a JWK Set');
  return { keys: keys.filter((k): k is JWK => typeof k === 'object' && k !== null && isPublicJwk(k)) };
}

export class RemoteJwksCache implements RemoteKeySource {
  readonly #cache = new Map<string, CacheEntry>();
  readonly #opts: RemoteJwksOptions;

  constructor(
    private readonly agent: EgressAgent,
    private readonly policy: EgressPolicy,
    private readonly monotonicNow: () => number,
    opts: Partial<RemoteJwksOptions> = {},
  ) {
    this.#opts = { ...DEFAULTS, ...opts };
  }

  /**
   * A failed fetch is remembered for `minRefreshMs` too, so requests naming an unreachable
   * `jwks_uri` cannot make this instance fetch it on every attempt.
   */
  async keys(uri: string, opts: { refresh: boolean }): Promise<{ keys: JWK[] }> {
    const now = this.monotonicNow();
    const hit = this.#cache.get(uri);
    const age = hit ? now - hit.at : Infinity;
    const ttl = hit?.failed ? this.#opts.minRefreshMs : this.#opts.ttlMs;
    if (hit && age < ttl && !(opts.refresh && age >= this.#opts.minRefreshMs)) return hit.keys;
    const entry: CacheEntry = { at: now, keys: this.#fetch(uri), failed: false };
    entry.keys.catch(() => {
      entry.failed = true;
    });
    if (this.#cache.size >= MAX_ENTRIES) this.#cache.clear();
    this.#cache.set(uri, entry);
    return entry.keys;
  }

  async #fetch(uri: string): Promise<{ keys: JWK[] }> {
    let res;
    try {
      res = await egressFetch(this.agent, uri, {
        headers: { accept: 'application/jwk-set+json, application/json' },
        maxBytes: this.#opts.maxBytes,
        timeoutMs: this.#opts.timeoutMs,
        policy: this.policy,
      });
    } catch (err) {
      if (!(err instanceof EgressFetchError)) throw err;
      if (err.kind === 'too_large') throw new RemoteJwksError('jwks_uri document is too large');
      if (err.kind === 'refused') throw new RemoteJwksError(`jwks_uri ${err.message}`);
      throw new RemoteJwksError(`jwks_uri could not be fetched (${err.message})`);
    }
    if (res.status !== 200) throw new RemoteJwksError(`jwks_uri answered ${res.status}`);
    return parseJwks(res.body.toString('utf8'));
  }
}
