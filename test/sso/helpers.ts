import type { EgressResolver } from '../../src/egress/policy.js';
import type { CreatedTenant } from '../../src/tenants/service.js';
import { type SigninTestServer, startSigninServer } from '../signin/helpers.js';
import { type Api, v1 } from '../helpers/v1.js';

/** `localhost` and `*.localhost` are 127.0.0.1 (the upstream tenants live on the same server). */
export const localResolver: EgressResolver = async (host) => (host === 'localhost' || host.endsWith('.localhost') ? [{ address: '127.0.0.1', family: 4 }] : []);

export interface SsoTestServer extends SigninTestServer {
  api: Api;
  /** A second tenant on the same server, `http://localhost:<port>`: the upstream OpenID Provider. */
  idp: CreatedTenant;
  idpIssuer: string;
  /** A /v1 client on the upstream tenant. */
  idpApi: Api;
}

/** The test server with loopback allowed by the egress policy and an upstream tenant on `localhost`. */
export async function startSsoServer(config: Record<string, unknown> = {}): Promise<SsoTestServer> {
  const s = await startSigninServer({ egressResolver: localResolver, config: { egressAllow: '127.0.0.1/32', ...config } } as Parameters<typeof startSigninServer>[0]);
  const idp = await s.createTenant(`localhost:${s.port}`);
  return Object.assign(s, {
    api: v1(s, s.tenant.platformApiKey),
    idp,
    idpIssuer: idp.tenant.issuer,
    idpApi: v1(s, idp.platformApiKey, idp.tenant.host),
  });
}
