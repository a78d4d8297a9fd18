/**
 * A per-instance cache of resource servers by identifier, like the client cache: a change made on
 * this instance is seen at once (invalidate), one made on another within `ttlMs`
 * (KEYHALL_CACHE_TTL_MS). Unknown identifiers are cached too (a resource indicator that names no
 * resource server is the common case), so a token request costs at most one look-up per TTL.
 */
import { performance } from 'node:perf_hooks';
import { Lru } from '../kernel/lru.js';
import type { ResourceServerRecord, ResourceServerStore } from './types.js';

export class CachedResourceServers implements ResourceServerStore {
  readonly #cache: Lru<string, { at: number; found: Promise<ResourceServerRecord | undefined> }>;

  constructor(
    private readonly store: ResourceServerStore,
    private readonly ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.#cache = new Lru(maxEntries);
  }

  findByIdentifier(tenantId: string, identifier: string): Promise<ResourceServerRecord | undefined> {
    const key = `${tenantId}\u0000${identifier}`;
    const now = performance.now();
    const hit = this.#cache.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.found;
    const found = this.store.findByIdentifier(tenantId, identifier);
    const entry = { at: now, found };
    this.#cache.set(key, entry);
    found.catch(() => {
      if (this.#cache.get(key) === entry) this.#cache.delete(key);
    });
    return found;
  }

  invalidate(tenantId: string, identifier: string): void {
    this.#cache.delete(`${tenantId}\u0000${identifier}`);
  }
}
