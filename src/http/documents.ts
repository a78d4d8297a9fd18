/** Public documents: discovery (RFC 8414, OpenID Discovery), RFC 9728 metadata, the JWKS and the protocol's OpenAPI document. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { errors } from '../kernel/errors.js';
import type { OAuthServer } from '../oauth/compose.js';
import { JWKS_PATH } from '../oauth/discovery/metadata.js';
import { oauthOpenApiDocument } from '../oauth/discovery/openapi.js';
import { scimOpenApiDocument } from '../scim/openapi.js';
import type { KeySource } from '../oauth/tokens/access-token.js';
import { tenantOf } from './tenant.js';

/** Public documents may be cached briefly; a rotated key is published before it is needed. */
const CACHE_CONTROL = 'public, max-age=300';

/** The only routes that send CORS headers: read-only, credential-less, any origin. */
function publicDocument(reply: FastifyReply): FastifyReply {
  return reply.header('access-control-allow-origin', '*').header('cache-control', CACHE_CONTROL);
}

export interface DocumentRouteOptions {
  oauth: Pick<OAuthServer, 'metadata'>;
  keys: Pick<KeySource, 'jwks'>;
  /** Members that depend on the tenant's settings (client onboarding, src/mcp/registration.ts). */
  tenantMetadata?: (tenantId: string, issuer: string) => Promise<Record<string, unknown>>;
}

export async function documentRoutes(app: FastifyInstance, opts: DocumentRouteOptions): Promise<void> {
  const { metadata } = opts.oauth;
  const asMetadata = async (issuer: string, tenantId: string) => ({
    ...metadata.authorizationServer(issuer),
    ...(await opts.tenantMetadata?.(tenantId, issuer)),
  });
  const documents: Record<string, (issuer: string, tenantId: string) => Promise<unknown> | unknown> = {
    // The OpenID configuration is the same document as the RFC 8414 metadata.
    '/.well-known/openid-configuration': asMetadata,
    '/.well-known/oauth-authorization-server': asMetadata,
    '/.well-known/oauth-protected-resource': (issuer) => metadata.protectedResource(issuer),
    [JWKS_PATH]: (_issuer, tenantId) => opts.keys.jwks(tenantId),
    // OpenAPI description of the protocol endpoints (docs/api.md).
    '/openapi/oauth.json': (issuer) => oauthOpenApiDocument(issuer),
    '/openapi/scim.json': (issuer) => scimOpenApiDocument(issuer),
  };
  for (const [path, build] of Object.entries(documents)) {
    app.get(path, async (request, reply) => {
      const tenant = tenantOf(request);
      const body = await build(tenant.issuer, tenant.id);
      return publicDocument(reply)
        .type(path === JWKS_PATH ? 'application/jwk-set+json' : 'application/json')
        .send(body);
    });
    app.options(path, async (_request, reply) =>
      publicDocument(reply).header('access-control-allow-methods', 'GET').header('access-control-max-age', '86400').code(204).send(),
    );
    app.route({
      method: ['POST', 'PUT', 'PATCH', 'DELETE'],
      url: path,
      handler: async () => {
        throw errors.methodNotAllowed('GET, HEAD, OPTIONS');
      },
    });
  }
}
