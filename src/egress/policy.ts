import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import type { IPv4, IPv6 } from 'ipaddr.js';

/**
 * The egress policy: which destinations Keyhall may open outbound connections to (webhooks,
 * the connected-accounts vault, client `jwks_uri`). The rules live here once; `egress.ts` applies
 * them to URLs and `egress-agent.ts` to every connection undici opens. See docs/webhooks.md.
 */

type Address = IPv4 | IPv6;
type Cidr = [Address, number];

/** The operator's policy. `allow` comes from `KEYHALL_EGRESS_ALLOW` (see parseEgressAllowlist). */
export interface EgressPolicy {
  /** Networks that are permitted even if in a forbidden range, and that may use `http:` and any port. */
  readonly allow: ReadonlyArray<Cidr>;
}

/** Nothing allowlisted: only public addresses over https on web ports. */
export const defaultEgressPolicy: EgressPolicy = Object.freeze({ allow: Object.freeze([]) as ReadonlyArray<Cidr> });

/** One address of a resolved host name, as `dns.promises.lookup(name, { all: true })` gives it. */
export interface ResolvedAddress {
  address: string;
  family?: number;
}

/** Resolves a host name to all of its addresses. Injected in tests (DNS rebinding). */
export type EgressResolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>;

/** The default resolver: `dns.promises.lookup(name, { all: true, verbatim: true })` (getaddrinfo, /etc/hosts included). */
export const systemResolver: EgressResolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** Rejects when `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    // Not unref'd: whoever awaits the result must be woken even if nothing else keeps the
    // process alive; the timer is cleared as soon as the race settles, so it never lingers.
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

export class EgressConfigError extends Error {
  override name = 'EgressConfigError';
}

/**
 * Parses `KEYHALL_EGRESS_ALLOW`: a comma-separated list of CIDRs (`127.0.0.1/32,::1/128`) or bare
 * addresses (taken as /32 or /128). Empty or unset means nothing is allowlisted. IPv4-mapped IPv6
 * networks (`::ffff:10.0.0.0/104`) are refused: write the IPv4 form. Throws EgressConfigError
 * naming the bad entry.
 */
export function parseEgressAllowlist(value: string | undefined | null): EgressPolicy {
  const allow: Cidr[] = [];
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    let cidr: Cidr;
    try {
      if (entry.includes('/')) {
        cidr = ipaddr.parseCIDR(entry);
      } else {
        const addr = ipaddr.parse(entry);
        cidr = [addr, addr.kind() === 'ipv4' ? 32 : 128];
      }
    } catch {
      throw new EgressConfigError(`KEYHALL_EGRESS_ALLOW: "${entry}" is not an IP address or CIDR`);
    }
    // Only strict dotted-quad IPv4 (ipaddr.js would also take 127.1 or 0x7f000001 here).
    const host = entry.split('/')[0] ?? '';
    if (cidr[0].kind() === 'ipv4' && !ipaddr.IPv4.isValidFourPartDecimal(host)) {
      throw new EgressConfigError(`KEYHALL_EGRESS_ALLOW: "${entry}" must use dotted-quad IPv4`);
    }
    if (cidr[0].kind() === 'ipv6' && (cidr[0] as IPv6).isIPv4MappedAddress()) {
      throw new EgressConfigError(`KEYHALL_EGRESS_ALLOW: "${entry}" is IPv4-mapped; write the IPv4 network`);
    }
    allow.push(cidr);
  }
  return Object.freeze({ allow: Object.freeze(allow) });
}

/** Parses an IP literal as it appears in a resolver answer or a URL host (brackets allowed). */
export function parseIp(literal: string): Address | null {
  const bare = literal.startsWith('[') && literal.endsWith(']') ? literal.slice(1, -1) : literal;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare)) return ipaddr.IPv6.parse(bare);
  return null;
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address, as the kernel treats it. */
function unwrapMapped(addr: Address): Address {
  return addr.kind() === 'ipv6' && (addr as IPv6).isIPv4MappedAddress() ? (addr as IPv6).toIPv4Address() : addr;
}

function isAllowlisted(addr: Address, policy: EgressPolicy): boolean {
  const a = unwrapMapped(addr);
  return policy.allow.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));
}

const v4 = (hi: number, lo: number): IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
const GLOBAL_UNICAST_V6: Cidr = ipaddr.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN: Cidr = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 addresses an IPv6 address carries to its real destination: IPv4-mapped and
 * IPv4-translated (last 32 bits), NAT64 64:ff9b::/96 (last 32 bits), 6to4 2002::/16 (bits
 * 16–47) and Teredo 2001::/32 (the server, bits 32–63, and the obfuscated client, last 32 bits).
 * `null` when the address is not one of these forms.
 */
function embeddedIpv4(addr: IPv6, range: string): IPv4[] | null {
  const p = addr.parts as [number, number, number, number, number, number, number, number];
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [v4(p[6], p[7])];
    case 'rfc6052':
      // The local-use prefix 64:ff9b:1::/48 (RFC 8215) leads into a private network: no embedding honoured.
      return addr.match(NAT64_WELL_KNOWN) ? [v4(p[6], p[7])] : [];
    case '6to4':
      return [v4(p[1], p[2])];
    case 'teredo':
      return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    default:
      return null;
  }
}

/**
 * Why an address is forbidden (the ipaddr.js range name, e.g. `loopback`, `private`,
 * `linkLocal`, `carrierGradeNat`, `reserved`), or null when it is a public unicast address.
 * IPv4 must be `unicast`; IPv6 must be `unicast` inside 2000::/3, and transition forms are judged
 * by the IPv4 addresses they embed (a form embedding 127.0.0.1 is `loopback`).
 */
export function forbiddenRange(addr: Address): string | null {
  if (addr.kind() === 'ipv4') {
    const range = addr.range();
    return range === 'unicast' ? null : range;
  }
  const v6 = addr as IPv6;
  if (v6.zoneId !== undefined) return 'linkLocal';
  const range = v6.range();
  const embedded = embeddedIpv4(v6, range);
  if (embedded !== null) {
    if (embedded.length === 0) return range;
    for (const inner of embedded) {
      const why = forbiddenRange(inner);
      if (why !== null) return why;
    }
    return null;
  }
  if (range !== 'unicast') return range;
  return v6.match(GLOBAL_UNICAST_V6) ? null : 'reserved';
}

/**
 * Ports a non-allowlisted destination may use: the web defaults 80 and 443, and 1024–65535 except
 * the list below. Everything else below 1024 is refused (ssh 22, smtp 25, dns 53, …). The list is
 * the Fetch Standard's "bad ports" above 1023 plus well-known datastores and control planes that
 * speak (or tolerate) HTTP and must never be reached from a tenant-supplied URL.
 */
export const REFUSED_HIGH_PORTS: ReadonlySet<number> = new Set([
  // Fetch Standard bad ports (https://fetch.spec.whatwg.org/#port-blocking) above 1023
  1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
  // SOCKS, databases, caches, queues, search, service discovery, container and cluster control planes
  1080, 1433, 1521, 2375, 2376, 2379, 2380, 3306, 3389, 4369, 5432, 5672, 5900, 5984, 6379, 6443, 7001, 8086, 8500, 8529, 9000, 9042, 9092, 9200, 9300, 10250,
  10255, 11211, 15672, 27017, 27018, 27019, 28017,
]);

export function isWebPort(port: number): boolean {
  if (port === 80 || port === 443) return true;
  return Number.isInteger(port) && port >= 1024 && port <= 65535 && !REFUSED_HIGH_PORTS.has(port);
}

export const defaultPort = (protocol: string): number => (protocol === 'http:' ? 80 : 443);

/** The short reasons a refusal gives (after the field name, e.g. "url: destination address is not allowed"). */
export const egressReasons = {
  invalidUrl: 'must be an absolute https URL',
  tooLong: 'is too long',
  scheme: 'only https URLs are allowed',
  credentials: 'must not contain credentials',
  fragment: 'must not contain a fragment',
  port: 'port is not allowed',
  host: 'host is not a valid DNS name',
  trailingDot: 'host must not end with a dot',
  address: 'destination address is not allowed',
  unresolvable: 'host could not be resolved',
} as const;

export type EgressReason = (typeof egressReasons)[keyof typeof egressReasons];

export type DestinationCheck = { ok: true } | { ok: false; reason: EgressReason; range?: string };

/**
 * The whole rule for one connection: an allowlisted address may be reached over http or https on
 * any port; any other address must be public unicast, over https, on a web port.
 */
export function checkDestination(address: string, protocol: string, port: number, policy: EgressPolicy): DestinationCheck {
  const addr = parseIp(address);
  if (addr === null) return { ok: false, reason: egressReasons.address, range: 'invalid' };
  if (protocol !== 'https:' && protocol !== 'http:') return { ok: false, reason: egressReasons.scheme };
  if (isAllowlisted(addr, policy)) return { ok: true };
  const range = forbiddenRange(addr);
  if (range !== null) return { ok: false, reason: egressReasons.address, range };
  if (protocol !== 'https:') return { ok: false, reason: egressReasons.scheme };
  if (!isWebPort(port)) return { ok: false, reason: egressReasons.port };
  return { ok: true };
}

/**
 * The error a connection refused by the policy fails with (undici hands it to the caller of
 * `request`). Never shown to tenants as is; the delivery log records `refused: <reason>`.
 */
export class EgressRefusedError extends Error {
  override name = 'EgressRefusedError';
  readonly code = 'KEYHALL_EGRESS_REFUSED';
  constructor(
    readonly reason: string,
    readonly host: string,
    readonly range?: string,
  ) {
    super(`egress refused for ${host}: ${reason}${range ? ` (${range})` : ''}`);
  }
}

export function isEgressRefusedError(err: unknown): err is EgressRefusedError {
  return err instanceof EgressRefusedError || (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'KEYHALL_EGRESS_REFUSED');
}
