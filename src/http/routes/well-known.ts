import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Keystore } from '../../kernel/crypto/keystore.js';
import { errors } from '../../kernel/errors.js';
import {
  authorizationServerMetadata,
  JWKS_PATH,
  openidConfiguration,
  protectedResourceMetadata,
} from '../../oauth/discovery/metadata.js';
import { tenantOf } from '../tenant.js';

/** Public documents may be cached briefly; a rotated key is published before it is needed. */
const CACHE_CONTROL = 'public, max-age=300';

/** The only routes that send CORS headers: read-only, credential-less, any origin. */
function publicDocument(reply: FastifyReply): FastifyReply {
  return reply
    .header('access-control-allow-origin', '*')
    .header('cache-control', CACHE_CONTROL);
}

export async function wellKnownRoutes(app: FastifyInstance, opts: { keystore: Keystore }): Promise<void> {
  const documents: Record<string, (issuer: string, tenantId: string) => Promise<unknown> | unknown> = {
    '/.well-known/openid-configuration': (issuer) => openidConfiguration(issuer),
    '/.well-known/oauth-authorization-server': (issuer) => authorizationServerMetadata(issuer),
    '/.well-known/oauth-protected-resource': (issuer) => protectedResourceMetadata(issuer),
    [JWKS_PATH]: (_issuer, tenantId) => opts.keystore.jwks(tenantId),
  };
  for (const [path, build] of Object.entries(documents)) {
    app.get(path, async (request, reply) => {
      const tenant = tenantOf(request);
      const body = await build(tenant.issuer, tenant.id);
      return publicDocument(reply).type(path === JWKS_PATH ? 'application/jwk-set+json' : 'application/json').send(body);
    });
    app.options(path, async (_request, reply) =>
      publicDocument(reply)
        .header('access-control-allow-methods', 'GET')
        .header('access-control-max-age', '86400')
        .code(204)
        .send(),
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
