import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Context } from '../context.js';
import type { Actor } from '../events/catalogue.js';
import { tenantOf } from '../http/tenant.js';
import { errors } from '../kernel/errors.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { clientRoutes } from './clients/routes.js';
import { ApiKeyService } from './api-keys/service.js';
import { authenticateApiKey, authorize, type Principal, type RouteAccess } from './auth.js';
import type { ManagementDeps } from './common.js';
import { directoryRoutes } from './directory/routes.js';
import { DirectoryService } from './directory/service.js';
import { eventRoutes } from './events/routes.js';
import { memberRoutes } from './members/routes.js';
import { MemberService } from './members/service.js';
import { organizationRoutes } from './organizations/routes.js';
import { OrganizationService } from './organizations/service.js';
import type { Permission } from './permissions.js';
import { repos } from '../storage/repos/index.js';
import { userRoutes } from './users/routes.js';
import { UserService } from './users/service.js';
import { webhookRoutes } from './webhooks/routes.js';
import { WebhookService } from './webhooks/service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission a /v1 route needs (docs/permissions.md lists them per route). */
    permission?: Permission;
    /** Which keys may call the route (see RouteAccess). */
    access?: RouteAccess;
    /** No API key needed (the OpenAPI document). */
    public?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated API key of a /v1 request. */
    principal: Principal | null;
  }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw errors.invalidToken();
  return request.principal;
}

export const actorOf = (request: FastifyRequest): Actor => ({ type: 'api_key', id: principalOf(request).keyId });

/**
 * The management API under /v1: API-key authentication and per-route authorization, zod
 * validation, and an OpenAPI 3.1 document generated from the route schemas.
 */
export async function v1Routes(app: FastifyInstance, opts: { ctx: Context }): Promise<void> {
  const { ctx } = opts;
  const deps: ManagementDeps = { db: ctx.db, clock: ctx.clock, events: ctx.events };

  // /v1 takes JSON bodies only: anything else is 415 unsupported_media_type.
  app.removeContentTypeParser(['text/plain', 'application/x-www-form-urlencoded']);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Keyhall management API', version: '1' },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'sk_live_… API key' } } },
      security: [{ apiKey: [] }],
    },
    transform: jsonSchemaTransform,
  });

  const limits = repos(ctx.db.kysely, ctx.db.dialect).rateLimits;
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config.public) return;
    const tenant = tenantOf(request);
    const principal = await authenticateApiKey(ctx.repos.apiKeys, ctx.clock, tenant.id, request.headers.authorization);
    request.principal = principal;
    // One limit per key across all instances; the 429 comes before any work is done.
    const waitMs = await limits.hit(tenant.id, `api_key:${principal.keyId}`, ctx.config.apiRateLimit, 60_000, ctx.clock.now());
    if (waitMs > 0) throw errors.tooManyRequests(Math.ceil(waitMs / 1000));
    if (!config.permission || !config.access) throw errors.serverError();
    const params = request.params as { orgId?: string };
    authorize(principal, { permission: config.permission, access: config.access, orgId: params.orgId });
  });

  await app.register(organizationRoutes(new OrganizationService(deps)));
  await app.register(userRoutes(new UserService(deps)));
  await app.register(memberRoutes(new MemberService(deps)));
  await app.register(apiKeyRoutes(new ApiKeyService(deps, ctx.repos.apiKeys)));
  await app.register(eventRoutes(ctx.repos.events));
  await app.register(directoryRoutes(new DirectoryService(deps)));
  await app.register(clientRoutes(ctx.oauth.clients, ctx.oauth.settings));
  await app.register(
    webhookRoutes(new WebhookService({ ...deps, envelope: ctx.envelope, egressPolicy: ctx.egress.policy, resolver: ctx.egress.resolver })),
  );

  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const doc = app.swagger() as Record<string, unknown>;
    return reply.header('cache-control', 'public, max-age=300').send({ ...doc, servers: [{ url: tenantOf(request).issuer }] });
  });
}
