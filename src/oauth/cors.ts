/**
 * Browser apps (OAuth 2.0 for Browser-Based Apps): the origins allowed to call /token, /revoke
 * and /userinfo cross-origin are those listed in some client's `allowed_origins`. Framework-free;
 * the HTTP binding is http/oauth/cors.ts. docs/oauth.md "Browser apps (CORS)".
 */
import { performance } from 'node:perf_hooks';
import { Lru } from '../kernel/lru.js';
import { isLoopbackHost } from '../kernel/tenancy.js';
import type { ClientStore } from './types.js';

/**
 * A web origin as a client registers it: `scheme://host[:port]` exactly as browsers serialise
 * it in `Origin` (lower case, no default port, no path, query, fragment, credentials or
 * trailing slash), no wildcard, https — or http for a loopback host only.
 */
export function isWebOrigin(value: string): boolean {
  if (value.includes('*')) return false;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return false;
  }
  if (u.origin !== value) return false;
  if (u.protocol === 'https:') return true;
  return u.protocol === 'http:' && isLoopbackHost(u.host);
}

/** Every origin listed by some client of a tenant. */
export interface TenantOriginSource {
  allowedOrigins(tenantId: string): Promise<string[]>;
}

/**
 * The origin policy with a per-tenant cache of the origin set, kept like the client cache: the
 * same time-to-live (KEYHALL_CACHE_TTL_MS), dropped on this instance when one of the tenant's
 * clients changes. Client-level checks read the (cached) client store.
 */
export class BrowserOrigins {
  readonly #cache: Lru<string, { at: number; origins: ReadonlySet<string> }>;

  constructor(
    private readonly source: TenantOriginSource,
    private readonly clients: ClientStore,
    private readonly ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.#cache = new Lru(maxEntries);
  }

  /** True when some client of the tenant lists `origin` (preflights know only the origin). */
  async tenantAllows(tenantId: string, origin: string): Promise<boolean> {
    return (await this.#origins(tenantId)).has(origin);
  }

  /** Whether the named client lists `origin`; undefined when there is no such client. */
  async clientAllows(tenantId: string, clientId: string, origin: string): Promise<boolean | undefined> {
    const client = await this.clients.find(tenantId, clientId);
    return client ? client.allowedOrigins.includes(origin) : undefined;
  }

  invalidate(tenantId: string): void {
    this.#cache.delete(tenantId);
  }

  async #origins(tenantId: string): Promise<ReadonlySet<string>> {
    const now = performance.now();
    const hit = this.#cache.get(tenantId);
    if (hit && now - hit.at < this.ttlMs) return hit.origins;
    const origins = new Set(await this.source.allowedOrigins(tenantId));
    this.#cache.set(tenantId, { at: now, origins });
    return origins;
  }
}
