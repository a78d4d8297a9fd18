/**
 * Client keys at `jwks_uri`, fetched through the egress agent (every address it connects to is
 * checked; no redirects), with a size and time limit, and cached per instance. A set lacking the
 * key an assertion names is fetched again at most once per `minRefreshMs` (key rotation).
 */
import type { JWK } from 'jose';
import { request } from 'undici';
import { isPublicJwk } from '../../oauth/jwk.js';
import type { RemoteKeySource } from '../../oauth/types.js';
import type { EgressAgent } from '../../egress/agent.js';
import type { EgressPolicy } from '../../egress/policy.js';
import { checkEgressUrlShape } from '../../egress/url.js';

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

async function readLimited(body: AsyncIterable<Buffer>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) throw new RemoteJwksError('jwks_uri document is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

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
    const shape = checkEgressUrlShape(uri, this.policy, { field: 'jwks_uri' });
    if (!shape.ok) throw new RemoteJwksError(`jwks_uri refused: ${shape.reason}`);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.#opts.timeoutMs);
    try {
      const res = await request(shape.url, {
        method: 'GET',
        dispatcher: this.agent,
        headers: { accept: 'application/jwk-set+json, application/json' },
        signal: controller.signal,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new RemoteJwksError(`jwks_uri answered ${res.statusCode}`);
      }
      return parseJwks(await readLimited(res.body as AsyncIterable<Buffer>, this.#opts.maxBytes));
    } catch (err) {
      if (err instanceof RemoteJwksError) throw err;
      throw new RemoteJwksError(`jwks_uri could not be fetched (${(err as Error).message})`);
    } finally {
      clearTimeout(timer);
    }
  }
}
