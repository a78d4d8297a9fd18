import net from 'node:net';
import { Lru } from './lru.js';

/** A tenant as every request sees it. */
export interface Tenant {
  id: string;
  host: string;
  issuer: string;
}

const HOST_RE = /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)(?::(\d{1,5}))?$/;

/**
 * Canonical form of a host (`name[:port]`): lower case, no trailing dot, no default port (80 or
 * 443). Returns null for anything that is not a syntactically valid host.
 */
export function normalizeHost(input: string | undefined): string | null {
  if (!input) return null;
  let host = input.trim().toLowerCase();
  const m = /^(.*?)(?::(\d+))?$/.exec(host);
  if (!m) return null;
  let name = m[1] ?? '';
  const port = m[2];
  // The name itself holds no port: `host:1:443` and `host:1.` are not hosts.
  if (!name.startsWith('[') && name.includes(':')) return null;
  if (name.endsWith('.') && !name.startsWith('[')) name = name.slice(0, -1);
  host = port === undefined || port === '80' || port === '443' ? name : `${name}:${port}`;
  const valid = HOST_RE.exec(host);
  if (!valid) return null;
  if (valid[1] !== undefined && Number(valid[1]) > 65535) return null;
  if (name.startsWith('[') && net.isIPv6(name.slice(1, -1)) === false) return null;
  return host;
}

/** The host name without port or IPv6 brackets. */
export function hostName(host: string): string {
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return name;
}

export function isLoopbackHost(host: string): boolean {
  const name = hostName(host);
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (net.isIPv4(name)) return name.startsWith('127.');
  if (net.isIPv6(name)) return name === '::1';
  return false;
}

export class TenantInputError extends Error {}

/**
 * Validates a tenant host and issuer. The issuer defaults to `https://<host>` (`http://` for
 * loopback hosts), must name the same host, and may be `http://` only for loopback hosts.
 */
export function checkTenantAddress(hostInput: string, issuerInput?: string): { host: string; issuer: string } {
  const host = normalizeHost(hostInput);
  if (!host) throw new TenantInputError(`invalid host: ${JSON.stringify(hostInput)}`);
  const loopback = isLoopbackHost(host);
  if (issuerInput === undefined) {
    return { host, issuer: `${loopback ? 'http' : 'https'}://${host}` };
  }
  let url: URL;
  try {
    url = new URL(issuerInput);
  } catch {
    throw new TenantInputError(`invalid issuer URL: ${JSON.stringify(issuerInput)}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new TenantInputError('issuer must use https (http is allowed only for loopback hosts)');
  }
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    throw new TenantInputError('issuer must be scheme://host[:port] with no path, query, fragment or credentials');
  }
  if (/[?#]$/.test(issuerInput) || /@/.test(issuerInput)) {
    throw new TenantInputError('issuer must be scheme://host[:port] with no path, query, fragment or credentials');
  }
  if (normalizeHost(url.host) !== host) {
    throw new TenantInputError(`issuer host ${url.host} does not match tenant host ${host}`);
  }
  return { host, issuer: `${url.protocol}//${url.host}` };
}

/** What tenant resolution needs from storage. */
export interface TenantLookup {
  findByHost(host: string): Promise<Tenant | undefined>;
}

/**
 * Resolves a request's tenant from its (normalised) host. Found tenants are cached per instance
 * for `ttlMs`; unknown hosts are not cached, so a tenant created elsewhere is served at once.
 */
export class TenantResolver {
  readonly #cache: Lru<string, { at: number; tenant: Tenant }>;

  constructor(
    private readonly lookup: TenantLookup,
    private readonly ttlMs: number,
    private readonly monotonicNow: () => number,
    maxEntries = 10_000,
  ) {
    this.#cache = new Lru(maxEntries);
  }

  /** Forgets a tenant (its host or issuer changed, or it was deleted): the next request looks it up. */
  invalidate(tenantId: string): void {
    for (const [host, entry] of [...this.#cache.entries()]) if (entry.tenant.id === tenantId) this.#cache.delete(host);
  }

  /** The tenant of `host` if this instance has it cached and fresh (no look-up, no promise). */
  cached(host: string): Tenant | undefined {
    const hit = this.#cache.get(host);
    return hit && this.monotonicNow() - hit.at < this.ttlMs ? hit.tenant : undefined;
  }

  async resolve(host: string): Promise<Tenant | undefined> {
    const cached = this.cached(host);
    if (cached) return cached;
    const now = this.monotonicNow();
    const found = await this.lookup.findByHost(host);
    if (!found) {
      this.#cache.delete(host);
      return undefined;
    }
    const tenant: Tenant = { id: found.id, host: found.host, issuer: found.issuer };
    this.#cache.set(host, { at: now, tenant });
    return tenant;
  }
}
