import { configJsonSchema } from '../config-as-code/schema.js';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler } from 'fastify-type-provider-zod';
import type { ManagementServices } from '../context.js';
import { tenantOf } from '../http/tenant.js';
import { validatorCompiler } from '../http/validation.js';
import { errors } from '../kernel/errors.js';
import { MANAGEMENT_FEATURES } from './features.js';
import { authorize, type RouteAccess } from './auth.js';
import type { OperationDoc } from './feature.js';
import { MANAGEMENT_API_DESCRIPTION } from './openapi/description.js';
import { finishManagementDocument } from './openapi/document.js';
import type { Permission } from './permissions.js';
import type { Principal } from './principal.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission a /v1 route needs (docs/permissions.md lists them per route). */
    permission?: Permission;
    /** Which keys may call the route (see RouteAccess). */
    access?: RouteAccess;
    /** What the OpenAPI document says of the operation (see OperationDoc). */
    operation?: OperationDoc;
    /** No API key needed (the OpenAPI document). */
    public?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated API key of a /v1 request. */
    principal: Principal | null;
  }
}

/**
 * The management routes themselves, without authentication: /v1 mounts them behind API keys,
 * the console (/console/api, src/http/console/api.ts) behind an administrator's session, so both
 * run the same validation, services, audit events and views.
 */
export async function managementRoutes(app: FastifyInstance, services: ManagementServices): Promise<void> {
  // JSON bodies only: anything else is 415 unsupported_media_type.
  app.removeContentTypeParser(['text/plain', 'application/x-www-form-urlencoded']);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Everything under /organizations/{orgId} is 404 for an organization that does not exist, in
  // one place, so a list route never answers an empty page for it. After authorization (a key
  // bound to another organization still gets its 403) and before validation (so a body or query
  // that would be refused does not hide that the organization is unknown).
  const underOrganization = `${app.prefix}/organizations/:orgId`;
  app.addHook('preValidation', async (request) => {
    const url = request.routeOptions.url;
    if (url !== undefined && (url === underOrganization || url.startsWith(`${underOrganization}/`))) {
      await services.organizations.get(tenantOf(request).id, (request.params as { orgId: string }).orgId);
    }
  });
  for (const feature of MANAGEMENT_FEATURES) await app.register(feature.plugin(services));
}

/**
 * The management API under /v1: API-key authentication and per-route authorization, zod
 * validation, and an OpenAPI 3.1 document generated from the route schemas.
 */
export async function v1Routes(app: FastifyInstance, opts: { services: ManagementServices }): Promise<void> {
  const { services } = opts;

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Keyhall management API',
        version: '1',
        description: MANAGEMENT_API_DESCRIPTION,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'sk_live_…',
            description: 'An API key: `Authorization: Bearer sk_live_…` (never in the query string)',
          },
        },
      },
      security: [{ apiKey: [] }],
    },
    // Each operation also says which permission it needs and which keys may call it.
    transform: (input) => {
      const out = jsonSchemaTransform(input);
      const { permission, access } = input.route.config ?? {};
      if (!out.schema || out.schema.hide || !permission) return out;
      return { ...out, schema: { ...out.schema, 'x-keyhall-permission': permission, 'x-keyhall-keys': access } };
    },
    transformObject: (input) => finishManagementDocument(jsonSchemaTransformObject(input) as Record<string, unknown>) as never,
  });

  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config.public) return;
    const principal = await services.auth.authenticate(tenantOf(request).id, request.headers.authorization);
    request.principal = principal;
    await services.auth.checkRateLimit(principal);
    if (!config.permission || !config.access) throw errors.serverError();
    const params = request.params as { orgId?: string };
    authorize(principal, { permission: config.permission, access: config.access, orgId: params.orgId });
  });

  await managementRoutes(app, services);

  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const doc = app.swagger() as Record<string, unknown>;
    return reply.header('cache-control', 'public, max-age=300').send({ ...doc, servers: [{ url: tenantOf(request).issuer }] });
  });

  // The JSON Schema of `keyhall config apply`'s file (docs/config-as-code.md): public like the
  // OpenAPI document, for editors; it describes the format only, nothing of the tenant.
  app.get('/config.schema.json', { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('application/schema+json').send(configJsonSchema()),
  );
}
