/**
 * A bounded map that forgets its least recently used entry first: the per-instance caches
 * (tenants, keys, clients, resource servers, lifetimes, origins) hold at most their configured
 * number of entries (KEYHALL_CACHE_MAX_TENANTS, KEYHALL_CACHE_MAX_CLIENTS), so memory stays flat
 * however many tenants an instance serves, and a hot entry is never evicted by a burst of cold ones.
 */
export class Lru<K, V> {
  readonly #map = new Map<K, V>();

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('an LRU cache holds at least one entry');
  }

  get size(): number {
    return this.#map.size;
  }

  /** The entry, now the most recently used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.maxEntries) this.#map.delete(this.#map.keys().next().value as K);
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  entries(): IterableIterator<[K, V]> {
    return this.#map.entries();
  }
}
