/**
 * A per-instance cache of client records in front of the client store, like the tenant and key
 * caches: a change made on this instance is seen at once (invalidate), one made on another
 * instance within `ttlMs` (KEYHALL_CACHE_TTL_MS). Unknown client_ids are never cached.
 */
import { performance } from 'node:perf_hooks';
import { Lru } from '../kernel/lru.js';
import type { SigninClientSettings, SigninStore } from './authorize/types.js';
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

/**
 * The sign-in settings of each client (third party, PAR required, ID token algorithm, logout
 * URIs), cached the same way and dropped with the client record: a sign-in reads them at PAR,
 * /authorize, the login page, the login and the token exchange. Entries are frozen, since every
 * caller shares them.
 */
export class CachedClientSettings {
  readonly #cache: Lru<string, { at: number; settings: Readonly<SigninClientSettings> }>;

  constructor(
    private readonly read: (tenantId: string, clientId: string) => Promise<SigninClientSettings>,
    private readonly ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.#cache = new Lru(maxEntries);
  }

  async get(tenantId: string, clientId: string): Promise<SigninClientSettings> {
    const key = `${tenantId}\u0000${clientId}`;
    const now = performance.now();
    const hit = this.#cache.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.settings;
    const read = await this.read(tenantId, clientId);
    const settings = Object.freeze({ ...read, postLogoutRedirectUris: Object.freeze([...read.postLogoutRedirectUris]) as string[] });
    this.#cache.set(key, { at: now, settings });
    return settings;
  }

  invalidate(tenantId: string, clientId: string): void {
    this.#cache.delete(`${tenantId}\u0000${clientId}`);
  }

  /** `store` with its clientSettings read through this cache; every other call goes straight through. */
  over(store: SigninStore): SigninStore {
    return {
      clientSettings: (tenantId, clientId) => this.get(tenantId, clientId),
      savePar: (uriHash, rec, now) => store.savePar(uriHash, rec, now),
      findPar: (tenantId, uriHash) => store.findPar(tenantId, uriHash),
      createFlow: (flowHash, rec) => store.createFlow(flowHash, rec),
      findFlow: (tenantId, flowHash) => store.findFlow(tenantId, flowHash),
      completeFlow: (tenantId, flowHash, parHash, codeHash, code, now) => store.completeFlow(tenantId, flowHash, parHash, codeHash, code, now),
      redeemCode: (tenantId, codeHash, clientId, now) => store.redeemCode(tenantId, codeHash, clientId, now),
      recordIssued: (tenantId, codeHash, issued) => store.recordIssued(tenantId, codeHash, issued),
      recordSessionClient: (tenantId, sessionId, clientId, now) => store.recordSessionClient(tenantId, sessionId, clientId, now),
      consent: (tenantId, userId, clientId) => store.consent(tenantId, userId, clientId),
    };
  }
}
