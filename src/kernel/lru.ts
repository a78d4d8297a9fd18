/**
 * A bounded map that forgets its least recently used entries first: the per-instance caches
 * (tenants, keys, clients, resource servers, lifetimes, origins) hold at most their configured
 * number of entries (KEYHALL_CACHE_MAX_TENANTS, KEYHALL_CACHE_MAX_CLIENTS), so memory stays flat
 * however many tenants an instance serves, and a hot entry is never evicted by a burst of cold ones.
 *
 * The "second chance" (CLOCK) approximation of LRU: a hit only marks its entry used, where moving
 * it to the back of a Map would delete and re-insert on every hit of every cache on the hot
 * paths. Eviction walks from the oldest entry: a used one is unmarked and moved to the back, the
 * first unused one goes. An entry used since the last walk passed it is never the one evicted.
 */
interface Entry<V> {
  value: V;
  used: boolean;
}

export class Lru<K, V> {
  readonly #map = new Map<K, Entry<V>>();

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('an LRU cache holds at least one entry');
  }

  get size(): number {
    return this.#map.size;
  }

  /** The entry, marked as recently used. */
  get(key: K): V | undefined {
    const entry = this.#map.get(key);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.value;
  }

  set(key: K, value: V): void {
    const entry = this.#map.get(key);
    if (entry !== undefined) {
      entry.value = value;
      entry.used = true;
      return;
    }
    // Room is made before the new entry goes in: it is never the one evicted.
    if (this.#map.size >= this.maxEntries) this.#evictOne();
    this.#map.set(key, { value, used: false });
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  *entries(): IterableIterator<[K, V]> {
    for (const [key, entry] of this.#map) yield [key, entry.value];
  }

  #evictOne(): void {
    // Ends: every entry moved to the back is unmarked, so a second pass finds one unused.
    for (const [key, entry] of this.#map) {
      this.#map.delete(key);
      if (!entry.used) return;
      entry.used = false;
      this.#map.set(key, entry);
    }
  }
}
