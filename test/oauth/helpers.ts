import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import * as oauth from 'oauth4webapi';
import type { Config } from '../../src/config/index.js';
import type { Clock } from '../../src/kernel/clock.js';
import type { ClientView } from '../../src/management/clients/schema.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

export const insecure = { [oauth.allowInsecureRequests]: true } as const;
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const AT_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface OAuthTestServer extends TestServer {
  issuer: string;
  as: oauth.AuthorizationServer;
  /** Registers a client through the ClientService (the /v1 routes are tested separately). */
  createClient(metadata: Record<string, unknown>): Promise<ClientView & { client_secret?: string }>;
  /** A raw form POST to an endpoint of the main tenant. */
  post(path: string, form: Record<string, string | string[]>, headers?: Record<string, string | string[]>): ReturnType<TestServer['request']>;
  /** Verifies an access token independently, against the tenant's published JWKS. */
  verifyAt(token: string, audience?: string): Promise<JWTPayload>;
}

export async function startOAuthServer(
  opts: {
    clock?: Clock;
    config?: Partial<Record<keyof Config, unknown>>;
    logStream?: NodeJS.WritableStream;
    localhost?: boolean;
    onStatement?: (sql: string) => void;
  } = {},
): Promise<OAuthTestServer> {
  const s = await startTestServer(opts);
  const issuer = s.tenant.tenant.issuer;
  const url = new URL(issuer);
  const as = await oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, { ...insecure, algorithm: 'oauth2' }));
  const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
  return Object.assign(s, {
    issuer,
    as,
    createClient: (metadata: Record<string, unknown>) => s.server.ctx.management.clients.create(s.tenant.tenant.id, metadata),
    post: (path: string, form: Record<string, string | string[]>, headers: Record<string, string | string[]> = {}) => {
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
      return s.request({ method: 'POST', path, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: body.toString() });
    },
    verifyAt: async (token: string, audience = issuer) => {
      const { payload } = await jwtVerify(token, jwks, {
        issuer,
        audience,
        typ: 'at+jwt',
        algorithms: ['EdDSA'],
        currentDate: opts.clock ? new Date(opts.clock.now()) : undefined,
      });
      return payload;
    },
  });
}

export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A confidential client for client_credentials with client_secret_basic. */
export function serviceClient(s: OAuthTestServer, extra: Record<string, unknown> = {}) {
  return s.createClient({ grant_types: ['client_credentials'], scope: 'read write', ...extra });
}
