/**
 * TXT lookups for organization domain verification. `KEYHALL_DNS_SERVERS` names the resolvers
 * (comma-separated `ip` or `ip:port`, `[ipv6]:port`); unset, the system's resolvers are used.
 * Lookups are answered within a time limit; any failure reads as "no record".
 */
import { Resolver } from 'node:dns/promises';
import { withTimeout } from './policy.js';

/** All TXT records of a name, each joined from its character strings. */
export type TxtResolver = (name: string) => Promise<string[]>;

export class DnsConfigError extends Error {
  override name = 'DnsConfigError';
}

export function createTxtResolver(servers: string | undefined, timeoutMs = 5000): TxtResolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  const list = (servers ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length > 0) {
    try {
      resolver.setServers(list);
    } catch {
      throw new DnsConfigError(`KEYHALL_DNS_SERVERS: not a list of IP addresses: ${JSON.stringify(servers)}`);
    }
  }
  return async (name) => {
    try {
      return (await withTimeout(resolver.resolveTxt(name), timeoutMs * 2)).map((chunks) => chunks.join(''));
    } catch {
      return [];
    }
  };
}
