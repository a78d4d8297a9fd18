/** The resource-server guard as a Fastify preHandler (core: src/oauth/resource-server/guard.ts). */
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { OAuthServer } from '../../oauth/compose.js';
import type { AccessTokenClaims } from '../../oauth/tokens/verify-access-token.js';
import type { OAuthTenant } from '../../oauth/types.js';
import { tenantOf } from '../tenant.js';
import { oauthHeaders } from './request.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified access token of a protected request (set by requireAccessToken). */
    accessToken?: AccessTokenClaims;
  }
}

export interface RequireAccessTokenOptions {
  /** The endpoint's resource identifier; by default the tenant issuer (its default audience). */
  resource?: (tenant: OAuthTenant, request: FastifyRequest) => string;
  scope?: string;
  /** The OID4VCI credential endpoint (GuardOptions.credentialEndpoint). */
  credentialEndpoint?: boolean;
  /** The URL a DPoP proof's `htu` must name; by default the tenant issuer + the request path. */
  url?: (tenant: OAuthTenant, request: FastifyRequest) => string;
  /** The tenant of the request; by default the one resolved from the Host header. */
  tenant?: (request: FastifyRequest) => OAuthTenant;
}

export function requireAccessToken(oauth: Pick<OAuthServer, 'guard'>, opts: RequireAccessTokenOptions = {}): preHandlerAsyncHookHandler {
  return async (request) => {
    const tenant = opts.tenant ? opts.tenant(request) : tenantOf(request);
    const resource = opts.resource ? opts.resource(tenant, request) : tenant.issuer;
    const url = opts.url ? opts.url(tenant, request) : `${tenant.issuer}${request.url.split('?')[0]}`;
    request.accessToken = await oauth.guard({ method: request.method, url, headers: oauthHeaders(request.raw) }, tenant, {
      resource,
      ...(opts.scope ? { scope: opts.scope } : {}),
      ...(opts.credentialEndpoint ? { credentialEndpoint: true } : {}),
    });
  };
}
