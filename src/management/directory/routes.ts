import { z } from 'zod';
import { ROLE_KEY } from '../members/service.js';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';
import { connectionView, directoryGroupView, directoryUserView } from './service.js';

const connectionSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    group_roles: z.record(z.string(), z.string()),
    rate_limit_per_minute: z.number(),
    has_token: z.boolean(),
    token_created_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'DirectoryConnection' });

const name = z.string().trim().min(1).max(200);
const groupRoles = z
  .record(z.string().trim().min(1).max(256), z.string().regex(ROLE_KEY, 'must be a role key'))
  .refine((m) => Object.keys(m).length <= 100, 'must have at most 100 groups');
const rateLimit = z.number().int().min(1).max(100_000);
const orgParams = z.strictObject({ orgId: idOf('org') });
const connParams = z.strictObject({ orgId: idOf('org'), connectionId: idOf('dir') });
const config = { permission: 'directory:write', access: 'organization' } as const;
const readConfig = { permission: 'directory:read', access: 'organization' } as const;
const connectionList = listing('directory_connections');
const userList = listing('directory_users');
const groupList = listing('directory_groups');

const directoryUserSchema = z
  .object({
    id: z.string().describe('The SCIM id (dsu_…)'),
    user_id: z.string().describe('The tenant user this SCIM user is linked to'),
    external_id: z.string().nullable(),
    user_name: z.string(),
    display_name: z.string().nullable(),
    given_name: z.string().nullable(),
    family_name: z.string().nullable(),
    email: z.string().nullable().describe('The primary (else first) email, lower-cased'),
    emails: z.array(z.object({ value: z.string(), type: z.string().nullable(), primary: z.boolean() })),
    active: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'DirectoryUser', description: 'A user provisioned over SCIM by a directory connection' });

const directoryGroupSchema = z
  .object({
    id: z.string().describe('The SCIM id (dsg_…)'),
    external_id: z.string().nullable(),
    display_name: z.string(),
    member_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'DirectoryGroup', description: 'A group provisioned over SCIM by a directory connection' });

export const directoryFeature = defineFeature({
  tags: [{ name: 'directory', description: 'Directory sync (SCIM 2.0) connections and their tokens' }],
  routes: (r, { directory: service }) => {
    r.post('/organizations/:orgId/directory/connections', {
      config: { ...config, operation: { operationId: 'createDirectoryConnection', ok: 'The connection created (it has no SCIM token yet)' } },
      schema: {
        summary: 'Create a directory (SCIM) connection',
        params: orgParams,
        body: z.strictObject({ name, group_roles: groupRoles.optional(), rate_limit_per_minute: rateLimit.optional() }),
        response: { 201: connectionSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request, reply) => {
        const c = await service.create(tenantOf(request).id, actorOf(request), request.params.orgId, request.body);
        return reply.code(201).send(connectionView(c));
      },
    });

    r.get('/organizations/:orgId/directory/connections', {
      config: { ...readConfig, operation: { operationId: 'listDirectoryConnections', ok: "A page of the organization's directory connections" } },
      schema: {
        summary: 'List directory connections',
        params: orgParams,
        querystring: connectionList.query,
        response: { 200: pageResponse(connectionSchema), 404: errorResponse },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const p = connectionList.page(await service.list(tenantOf(request).id, request.params.orgId, after, limit + 1), limit, (c) => c.id);
        return { ...p, data: p.data.map(connectionView) };
      },
    });

    r.get('/organizations/:orgId/directory/connections/:connectionId', {
      config: { ...readConfig, operation: { operationId: 'getDirectoryConnection', ok: 'The connection' } },
      schema: { summary: 'Get a directory connection', params: connParams, response: { 200: connectionSchema, 404: errorResponse } },
      handler: async (request) => connectionView(await service.get(tenantOf(request).id, request.params.orgId, request.params.connectionId)),
    });

    r.get('/organizations/:orgId/directory/connections/:connectionId/users', {
      config: { ...readConfig, operation: { operationId: 'listDirectoryUsers', ok: 'A page of the users the connection provisioned over SCIM, oldest first' } },
      schema: {
        summary: 'List the users a connection provisioned over SCIM',
        params: connParams,
        querystring: userList.query,
        response: { 200: pageResponse(directoryUserSchema), 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.listUsers(tenantOf(request).id, request.params.orgId, request.params.connectionId, after, limit + 1);
        const p = userList.page(rows, limit, (u) => u.id);
        return { ...p, data: p.data.map(directoryUserView) };
      },
    });

    r.get('/organizations/:orgId/directory/connections/:connectionId/groups', {
      config: {
        ...readConfig,
        operation: { operationId: 'listDirectoryGroups', ok: 'A page of the groups the connection provisioned over SCIM, oldest first, with member counts' },
      },
      schema: {
        summary: 'List the groups a connection provisioned over SCIM, with member counts',
        params: connParams,
        querystring: groupList.query,
        response: { 200: pageResponse(directoryGroupSchema), 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.listGroups(tenantOf(request).id, request.params.orgId, request.params.connectionId, after, limit + 1);
        const p = groupList.page(rows, limit, (g) => g.id);
        return { ...p, data: p.data.map(directoryGroupView) };
      },
    });

    r.patch('/organizations/:orgId/directory/connections/:connectionId', {
      config: { ...config, operation: { operationId: 'updateDirectoryConnection', ok: 'The connection as updated' } },
      schema: {
        summary: 'Rename a connection, change its group → role mapping or rate limit',
        params: connParams,
        body: z.strictObject({ name: name.optional(), group_roles: groupRoles.optional(), rate_limit_per_minute: rateLimit.optional() }),
        response: { 200: connectionSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) =>
        connectionView(await service.update(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.connectionId, request.body)),
    });

    r.delete('/organizations/:orgId/directory/connections/:connectionId', {
      config: { ...config, operation: { operationId: 'deleteDirectoryConnection', ok: 'Deleted; its token stops working and the members stay' } },
      schema: { summary: 'Delete a connection (members stay)', params: connParams, response: { 204: z.undefined(), 404: errorResponse } },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.connectionId);
        return reply.code(204).send();
      },
    });

    r.post('/organizations/:orgId/directory/scim_token', {
      config: { ...config, operation: { operationId: 'createScimToken', ok: 'The SCIM token, shown only in this response' } },
      schema: {
        summary: "Mint a connection's SCIM token (shown once; revokes its previous token)",
        params: orgParams,
        body: z.strictObject({ connection_id: idOf('dir') }),
        response: { 201: z.object({ connection_id: z.string(), token: z.string(), scim_base_url: z.string() }), 400: errorResponse, 404: errorResponse },
      },
      handler: async (request, reply) => {
        const tenant = tenantOf(request);
        const token = await service.mintToken(tenant.id, actorOf(request), request.params.orgId, request.body.connection_id);
        return reply
          .code(201)
          .header('cache-control', 'no-store')
          .send({ connection_id: request.body.connection_id, token, scim_base_url: `${tenant.issuer.replace(/\/$/, '')}/scim/v2` });
      },
    });
  },
});
