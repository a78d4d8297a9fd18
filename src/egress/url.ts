import { AppError, errors } from '../kernel/errors.js';
import {
  checkDestination,
  defaultPort,
  egressReasons,
  isWebPort,
  parseIp,
  systemResolver,
  withTimeout,
  type EgressPolicy,
  type EgressReason,
  type EgressResolver,
} from './policy.js';

/**
 * Egress checks on URLs, for registration time (webhook endpoints, upstream endpoints, client
 * `jwks_uri`). Connections themselves are guarded by `createEgressAgent` (agent.ts), which
 * re-checks every address actually connected to. Rules and reasons: docs/webhooks.md.
 */

export const MAX_EGRESS_URL_LENGTH = 2048;

export type EgressDecision =
  | {
      ok: true;
      /** The URL normalised by the WHATWG parser: store and fetch this one. */
      url: string;
      /** Lower-case ASCII host name, or the IP literal (IPv6 without brackets). */
      hostname: string;
      port: number;
      /** The addresses checked: the literal, or every address the name resolved to (empty when not resolved). */
      addresses: string[];
    }
  | {
      ok: false;
      /** The short reason, also in `error.description` after the field name. */
      reason: EgressReason;
      /** For the log: the forbidden range (`loopback`, `private`, …) or the address concerned. */
      detail?: string;
      /**
       * 400 `invalid_request` with `error_description` "<field>: <reason>" (a refused address adds
       * what it means and how to allowlist it): throw it from a route.
       */
      error: AppError;
    };

export interface EgressCheckOptions {
  /** The request field named in the error description (default `url`). */
  field?: string;
}

export interface EgressResolveOptions extends EgressCheckOptions {
  /** Default: `dns.promises.lookup(name, { all: true, verbatim: true })`. */
  resolver?: EgressResolver;
  /** Resolution time limit (default 5000 ms); a name that does not resolve in time is refused. */
  timeoutMs?: number;
}

type Parsed = { ok: true; url: URL; hostname: string; ip: boolean; port: number } | { ok: false; reason: EgressReason; detail?: string };

const DNS_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/**
 * The syntactic stage, shared by every check: WHATWG parsing (which turns `127.1`, `2130706433`,
 * `0x7f000001`, `017700000001`, full-width digits and IDN into their canonical ASCII form), then
 * scheme, credentials, fragment and host-name shape. Addresses, ports and `http:` are judged by
 * `checkDestination` once the destination address is known.
 */
function parseEgressUrl(input: string): Parsed {
  if (typeof input !== 'string' || input.length === 0) return { ok: false, reason: egressReasons.invalidUrl };
  if (input.length > MAX_EGRESS_URL_LENGTH) return { ok: false, reason: egressReasons.tooLong };
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: egressReasons.invalidUrl };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: egressReasons.scheme, detail: url.protocol };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: egressReasons.credentials };
  if (url.hash !== '' || url.href.endsWith('#')) return { ok: false, reason: egressReasons.fragment };
  const port = url.port === '' ? defaultPort(url.protocol) : Number(url.port);
  const literal = parseIp(url.hostname);
  if (literal !== null) {
    return { ok: true, url, hostname: literal.toString(), ip: true, port };
  }
  const name = url.hostname;
  if (name.endsWith('.')) return { ok: false, reason: egressReasons.trailingDot, detail: name };
  if (name.length > 253 || !name.split('.').every((label) => DNS_LABEL.test(label))) {
    return { ok: false, reason: egressReasons.host, detail: name };
  }
  return { ok: true, url, hostname: name, ip: false, port };
}

/**
 * What a refused address means and how an operator permits one, appended to the description:
 * the short reason alone left a developer pointing a webhook at a local receiver with no way
 * forward. The range and the address stay out of it (they go to `detail`, for the log), so a
 * tenant learns nothing about what a name resolves to inside the network.
 */
const ADDRESS_REFUSAL_HINT =
  'it is a loopback, private, link-local or otherwise non-public address, which Keyhall connects to only when ' +
  'the operator allowlists its network in KEYHALL_EGRESS_ALLOW (e.g. 127.0.0.1/32 for a receiver on the same ' +
  'machine; see docs/webhooks.md, "Egress policy")';

const refuse = (field: string, reason: EgressReason, detail?: string): EgressDecision => ({
  ok: false,
  reason,
  ...(detail !== undefined ? { detail } : {}),
  error: errors.invalidRequest(`${field}: ${reason}${reason === egressReasons.address ? `: ${ADDRESS_REFUSAL_HINT}` : ''}`),
});

function judge(p: Extract<Parsed, { ok: true }>, addresses: string[], policy: EgressPolicy, field: string): EgressDecision {
  for (const address of addresses) {
    const check = checkDestination(address, p.url.protocol, p.port, policy);
    if (!check.ok) return refuse(field, check.reason, check.range ? `${address} (${check.range})` : address);
  }
  return { ok: true, url: p.url.href, hostname: p.hostname, port: p.port, addresses };
}

/**
 * The check before fetching through the egress agent: the URL's shape, and the full rule for an
 * IP literal. A host name's addresses (and with them `http:` and the port, which the allowlist
 * may permit) are judged by the agent as it connects.
 */
export function checkEgressUrlShape(url: string, policy: EgressPolicy, opts: EgressCheckOptions = {}): EgressDecision {
  const field = opts.field ?? 'url';
  const p = parseEgressUrl(url);
  if (!p.ok) return refuse(field, p.reason, p.detail);
  if (p.ip) return judge(p, [p.hostname], policy, field);
  return { ok: true, url: p.url.href, hostname: p.hostname, port: p.port, addresses: [] };
}

/**
 * Synchronous check of a URL. An IP literal (in any spelling) gets the full rule. A host name is
 * only checked in shape, and conservatively: it must use https on a web port, since allowlist
 * exemptions apply to addresses and a name's addresses are not known here. Use
 * `checkEgressUrlResolved` at registration; connections are guarded by the egress agent.
 */
export function checkEgressUrl(url: string, policy: EgressPolicy, opts: EgressCheckOptions = {}): EgressDecision {
  const field = opts.field ?? 'url';
  const p = parseEgressUrl(url);
  if (!p.ok) return refuse(field, p.reason, p.detail);
  if (p.ip) return judge(p, [p.hostname], policy, field);
  if (p.url.protocol !== 'https:') return refuse(field, egressReasons.scheme, p.hostname);
  if (!isWebPort(p.port)) return refuse(field, egressReasons.port, String(p.port));
  return { ok: true, url: p.url.href, hostname: p.hostname, port: p.port, addresses: [] };
}

/**
 * The registration-time check: as `checkEgressUrl`, and a host name is resolved and refused if
 * it does not resolve or if ANY of its addresses is refused (`127.0.0.1.nip.io`, a name with one
 * public and one private record). `http:` and odd ports pass only when every address is allowlisted.
 */
export async function checkEgressUrlResolved(url: string, policy: EgressPolicy, opts: EgressResolveOptions = {}): Promise<EgressDecision> {
  const field = opts.field ?? 'url';
  const p = parseEgressUrl(url);
  if (!p.ok) return refuse(field, p.reason, p.detail);
  if (p.ip) return judge(p, [p.hostname], policy, field);
  let addresses: string[];
  try {
    addresses = (await withTimeout((opts.resolver ?? systemResolver)(p.hostname), opts.timeoutMs ?? 5000)).map((a) => a.address);
  } catch {
    return refuse(field, egressReasons.unresolvable, p.hostname);
  }
  if (addresses.length === 0) return refuse(field, egressReasons.unresolvable, p.hostname);
  return judge(p, addresses, policy, field);
}

/** `checkEgressUrlResolved`, throwing the 400 `invalid_request` AppError; returns the normalised URL. */
export async function assertEgressUrl(url: string, policy: EgressPolicy, opts: EgressResolveOptions = {}): Promise<string> {
  const decision = await checkEgressUrlResolved(url, policy, opts);
  if (!decision.ok) throw decision.error;
  return decision.url;
}
