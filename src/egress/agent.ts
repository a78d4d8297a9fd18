import net from 'node:net';
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Agent, buildConnector } from 'undici';
import {
  checkDestination,
  defaultPort,
  EgressRefusedError,
  egressReasons,
  isEgressRefusedError,
  systemResolver,
  withTimeout,
  type EgressPolicy,
  type EgressResolver,
} from './policy.js';

/**
 * The connection-time guard: an undici Agent whose connector resolves the host itself, checks
 * EVERY address against the egress policy, and then connects to one of those checked addresses
 * (by IP, with SNI and certificate checks still on the host name). The address connected to is
 * the address checked, so a name that resolves somewhere else on the second lookup (DNS
 * rebinding) gains nothing, and a refused destination never sees a TCP connection.
 * The agent follows no redirects (undici's Agent never does).
 */

export interface EgressAgentOptions {
  /** How host names are resolved (default `dns.promises.lookup`, all addresses). Injected in tests. */
  resolver?: EgressResolver;
  /** Limit for resolving a name and for each TCP+TLS connect (default 10 000 ms). */
  connectTimeoutMs?: number;
  /** Extra TLS options (e.g. `ca` in tests). `host`, `port` and `servername` are set by the agent. */
  tls?: Omit<ConnectionOptions, 'host' | 'port' | 'servername' | 'socket'>;
  /** Other undici Agent options (connections per origin, keep-alive); `connect` is the agent's own. */
  agent?: Omit<Agent.Options, 'connect'>;
  /** Told of every refused connection, for the log. */
  onRefused?: (err: EgressRefusedError) => void;
}

type Connector = buildConnector.connector;
type ConnectOptions = buildConnector.Options;
type Callback = buildConnector.Callback;

function egressConnector(policy: EgressPolicy, opts: EgressAgentOptions): Connector {
  const timeout = opts.connectTimeoutMs ?? 10_000;
  const base = buildConnector({ ...opts.tls, timeout } as buildConnector.BuildOptions);
  const resolver = opts.resolver ?? systemResolver;

  return (options: ConnectOptions, callback: Callback): void => {
    const { hostname, protocol } = options;
    const port = options.port ? Number(options.port) : defaultPort(protocol);
    const literal = net.isIP(hostname) !== 0;
    const fail = (err: Error): void => {
      if (isEgressRefusedError(err)) opts.onRefused?.(err);
      callback(err, null);
    };
    const refusal = (address: string): EgressRefusedError | null => {
      const check = checkDestination(address, protocol, port, policy);
      return check.ok ? null : new EgressRefusedError(check.reason, hostname, check.range ? `${address} ${check.range}` : address);
    };

    const connectTo = (addresses: string[], i: number): void => {
      const address = addresses[i] as string;
      const servername = protocol === 'https:' && !literal ? options.servername || hostname : options.servername;
      const next = (err: Error): void => (i + 1 < addresses.length ? connectTo(addresses, i + 1) : callback(err, null));
      try {
        base({ ...options, hostname: address, ...(servername ? { servername } : {}) }, (err, socket) => {
          if (err !== null) return next(err);
          // Belt and braces: the peer must be the checked address.
          const peer = (socket as Socket).remoteAddress;
          const refused = peer === undefined ? new EgressRefusedError(egressReasons.address, hostname, 'no peer') : refusal(peer);
          if (refused !== null) {
            (socket as Socket).destroy();
            return fail(refused);
          }
          callback(null, socket as Socket);
        });
      } catch (err) {
        next(err instanceof Error ? err : new Error(String(err)));
      }
    };

    const addresses: Promise<string[]> = literal
      ? Promise.resolve([hostname])
      : withTimeout(resolver(hostname), timeout).then((list) => list.map((a) => a.address));
    addresses.then(
      (list) => {
        if (list.length === 0) return fail(new EgressRefusedError(egressReasons.unresolvable, hostname));
        for (const address of list) {
          const refused = refusal(address);
          if (refused !== null) return fail(refused);
        }
        connectTo(list, 0);
      },
      (err: unknown) => fail(err instanceof Error ? err : new Error(String(err))),
    );
  };
}

/** An undici Agent that only connects where the policy allows; pass it as `dispatcher`. */
export class EgressAgent extends Agent {
  readonly policy: EgressPolicy;
  constructor(policy: EgressPolicy, opts: EgressAgentOptions = {}) {
    super({ ...opts.agent, connect: egressConnector(policy, opts) });
    this.policy = policy;
  }
}

/** The egress-guarded dispatcher for webhooks, the vault and `jwks_uri` fetching. */
export function createEgressAgent(policy: EgressPolicy, opts: EgressAgentOptions = {}): EgressAgent {
  return new EgressAgent(policy, opts);
}
