import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { SCOPE_TOKEN } from '../../oauth/scope.js';
import { isResourceIndicator } from '../../oauth/token/targets.js';
import { ACCESS_TOKEN_ALGS } from '../../oauth/tokens/jws.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';
import { resourceServerView } from './service.js';

/** An audience URI (RFC 8707 §2): absolute, no fragment. */
const identifier = z.string().max(2000).refine(isResourceIndicator, 'must be an absolute URI without a fragment');

const resourceServerList = listing('resource_servers');

const fields = {
  name: z.string().min(1).max(200),
  identifier,
  access_token_signing_alg: z.enum(ACCESS_TOKEN_ALGS),
  access_token_ttl_seconds: z
    .number()
    .int()
    .min(30)
    .max(24 * 3600)
    .nullable(),
  scopes: z.array(z.string().regex(SCOPE_TOKEN, 'must be a scope token')).max(100),
  dpop_required: z.boolean(),
};
/** The declared permissions: the scopes a client may request for this API, with descriptions (docs/authorization.md). */
const permissions = z
  .array(z.strictObject({ name: z.string().regex(SCOPE_TOKEN, 'must be a scope token'), description: z.string().max(500).nullable().optional() }))
  .max(100);
const createBody = z.strictObject({
  ...fields,
  access_token_signing_alg: fields.access_token_signing_alg.optional(),
  access_token_ttl_seconds: fields.access_token_ttl_seconds.optional(),
  scopes: fields.scopes.optional(),
  permissions: permissions.optional(),
  dpop_required: fields.dpop_required.optional(),
});
const patchBody = z.strictObject({ ...fields, permissions }).partial();
const view = z
  .object({
    ...fields,
    permissions: z.array(z.object({ name: z.string(), description: z.string().nullable() })),
    id: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'ResourceServer' });
const params = z.strictObject({ rsId: idOf('rs') });

export const resourceServersFeature = defineFeature({
  tags: [{ name: 'resource servers', description: 'APIs that accept Keyhall access tokens' }],
  routes: (r, { resourceServers: service }) => {
    r.post('/resource_servers', {
      config: {
        permission: 'resource_servers:write',
        access: 'platform',
        operation: { operationId: 'createResourceServer', ok: 'The resource server registered', errors: [409] },
      },
      schema: { summary: 'Register a resource server (API)', body: createBody, response: { 201: view, 400: errorResponse, 409: errorResponse } },
      handler: async (request, reply) => {
        const tenant = tenantOf(request);
        return reply.code(201).send(resourceServerView(await service.create(tenant.id, tenant.issuer, actorOf(request), request.body)));
      },
    });

    r.get('/resource_servers', {
      config: { permission: 'resource_servers:read', access: 'platform', operation: { operationId: 'listResourceServers', ok: 'A page of resource servers' } },
      schema: { summary: 'List resource servers', querystring: resourceServerList.query, response: { 200: pageResponse(view) } },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.list(tenantOf(request).id, { after, limit: limit + 1 });
        return resourceServerList.page(rows.map(resourceServerView), limit, (rs) => rs.id);
      },
    });

    r.get('/resource_servers/:rsId', {
      config: { permission: 'resource_servers:read', access: 'platform', operation: { operationId: 'getResourceServer', ok: 'The resource server' } },
      schema: { summary: 'Get a resource server', params, response: { 200: view, 404: errorResponse } },
      handler: async (request) => resourceServerView(await service.get(tenantOf(request).id, request.params.rsId)),
    });

    r.patch('/resource_servers/:rsId', {
      config: {
        permission: 'resource_servers:write',
        access: 'platform',
        operation: { operationId: 'updateResourceServer', ok: 'The resource server as updated', errors: [409] },
      },
      schema: {
        summary: 'Change a resource server',
        params,
        body: patchBody,
        response: { 200: view, 400: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request) => {
        const tenant = tenantOf(request);
        return resourceServerView(await service.update(tenant.id, tenant.issuer, actorOf(request), request.params.rsId, request.body));
      },
    });

    r.delete('/resource_servers/:rsId', {
      config: { permission: 'resource_servers:write', access: 'platform', operation: { operationId: 'deleteResourceServer', ok: 'Removed' } },
      schema: { summary: 'Remove a resource server', params, response: { 204: z.undefined(), 404: errorResponse } },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, actorOf(request), request.params.rsId);
        return reply.code(204).send();
      },
    });
  },
});
