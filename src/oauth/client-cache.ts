/**
 * A per-instance cache of client records in front of the client store, like the tenant and key
 * caches: a change made on this instance is seen at once (invalidate), one made on another
 * instance within `ttlMs` (KEYHALL_CACHE_TTL_MS). Unknown client_ids are never cached.
 */
import { performance } from 'node:perf_hooks';
import { Lru } from '../kernel/lru.js';
import type { ClientRecord, ClientStore } from './types.js';

export class CachedClientStore implements ClientStore {
  readonly #cache: Lru<string, { at: number; client: ClientRecord }>;

  constructor(
    private readonly store: ClientStore,
    private readonly ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.#cache = new Lru(maxEntries);
  }

  async find(tenantId: string, clientId: string): Promise<ClientRecord | undefined> {
    const key = `${tenantId}\u0000${clientId}`;
    const now = performance.now();
    const hit = this.#cache.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.client;
    const client = await this.store.find(tenantId, clientId);
    if (!client) {
      this.#cache.delete(key);
      return undefined;
    }
    this.#cache.set(key, { at: now, client });
    return client;
  }

  invalidate(tenantId: string, clientId: string): void {
    this.#cache.delete(`${tenantId}\u0000${clientId}`);
  }
}
