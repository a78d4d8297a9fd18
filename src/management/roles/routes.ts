import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { SCOPE_TOKEN } from '../../oauth/scope.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { ROLE_KEY } from '../members/service.js';
import { actorOf, principalOf } from '../principal.js';
import { roleView } from './service.js';
import { clientGrantView } from './client-grants.js';

const key = z.string().regex(ROLE_KEY, 'must be a role key: lower-case letters, digits, _ and -, up to 64');
const permission = z.strictObject({ resource_server_id: idOf('rs'), permission: z.string().regex(SCOPE_TOKEN, 'must be a scope token') });
const fields = {
  name: z.string().min(1).max(200),
  description: z.string().max(1000).nullable(),
  permissions: z.array(permission).max(500),
};
const createBody = z.strictObject({ key, ...fields, description: fields.description.optional(), permissions: fields.permissions.optional() });
const patchBody = z.strictObject(fields).partial();
const roleSchema = z
  .object({
    id: z.string(),
    key: z.string(),
    organization_id: z.string().nullable(),
    name: z.string(),
    description: z.string().nullable(),
    permissions: z.array(z.object({ resource_server_id: z.string(), permission: z.string() })),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Role' });
const roleList = listing('roles');
const keyParams = z.strictObject({ roleKey: key });
const orgParams = z.strictObject({ orgId: idOf('org') });
const orgKeyParams = z.strictObject({ orgId: idOf('org'), roleKey: key });
const grantParams = z.strictObject({ orgId: idOf('org'), clientId: idOf('cli') });
const grantList = listing('client_grants');
const clientGrantSchema = z
  .object({
    client_id: z.string(),
    client_name: z.string().nullable(),
    organization_id: z.string(),
    roles: z.array(z.string()),
    updated_at: z.string(),
  })
  .meta({ id: 'ClientGrant', description: 'A client_credentials client bound to an organization, with its roles there' });
const deleteQuery = z.strictObject({ reassign: key.optional() });
const settings = z.object({ default_role: z.string() }).meta({ id: 'RoleSettings' });
const checkBody = z.strictObject({
  user_id: idOf('user'),
  organization_id: idOf('org'),
  permission: z.string().regex(SCOPE_TOKEN, 'must be a scope token'),
  resource: z.string().min(1).max(2000).optional(),
});
const checkResult = z.object({ allowed: z.boolean(), roles: z.array(z.string()) }).meta({ id: 'AuthorizeCheck' });

export const rolesFeature = defineFeature({
  tags: [{ name: 'roles', description: "Organizations' roles and the permissions they grant (docs/authorization.md)" }],
  routes: (r, { roles: service, clientGrants }) => {
    // Tenant-wide roles: platform keys (an organization's key gets 403 forbidden).
    r.get('/roles', {
      config: { permission: 'roles:read', access: 'platform', operation: { operationId: 'listRoles', ok: 'A page of tenant-wide roles, by key' } },
      schema: { summary: 'List tenant-wide roles', querystring: roleList.query, response: { 200: pageResponse(roleSchema) } },
      handler: async (request) => {
        const { limit, after } = request.query;
        return roleList.page((await service.list(tenantOf(request).id, null, after, limit + 1)).map(roleView), limit, (x) => x.key);
      },
    });
    r.post('/roles', {
      config: { permission: 'roles:write', access: 'platform', operation: { operationId: 'createRole', ok: 'The role defined', errors: [409] } },
      schema: { summary: 'Define a tenant-wide role', body: createBody, response: { 201: roleSchema, 400: errorResponse, 409: errorResponse } },
      handler: async (request, reply) => reply.code(201).send(roleView(await service.create(tenantOf(request).id, actorOf(request), null, request.body))),
    });
    r.get('/roles/:roleKey', {
      config: { permission: 'roles:read', access: 'platform', operation: { operationId: 'getRole', ok: 'The role' } },
      schema: { summary: 'Get a tenant-wide role', params: keyParams, response: { 200: roleSchema, 404: errorResponse } },
      handler: async (request) => roleView(await service.get(tenantOf(request).id, null, request.params.roleKey)),
    });
    r.patch('/roles/:roleKey', {
      config: { permission: 'roles:write', access: 'platform', operation: { operationId: 'updateRole', ok: 'The role as updated' } },
      schema: {
        summary: 'Change a tenant-wide role',
        params: keyParams,
        body: patchBody,
        response: { 200: roleSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => roleView(await service.update(tenantOf(request).id, actorOf(request), null, request.params.roleKey, request.body)),
    });
    r.delete('/roles/:roleKey', {
      config: {
        permission: 'roles:write',
        access: 'platform',
        operation: { operationId: 'deleteRole', ok: 'Deleted (its holders given the role ?reassign= names)', errors: [409] },
      },
      schema: {
        summary: 'Delete a tenant-wide role (409 while members hold it, unless ?reassign=<key>)',
        params: keyParams,
        querystring: deleteQuery,
        response: { 204: z.undefined(), 400: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, actorOf(request), null, request.params.roleKey, request.query.reassign);
        return reply.code(204).send();
      },
    });

    r.get('/role_settings', {
      config: { permission: 'roles:read', access: 'platform', operation: { operationId: 'getRoleSettings', ok: 'The role settings' } },
      schema: { summary: 'The default role for new members', response: { 200: settings } },
      handler: async (request) => ({ default_role: await service.defaultRole(tenantOf(request).id) }),
    });
    r.put('/role_settings', {
      config: { permission: 'roles:write', access: 'platform', operation: { operationId: 'setRoleSettings', ok: 'The role settings as stored' } },
      schema: {
        summary: 'Set the default role for new members (a tenant-wide role)',
        body: z.strictObject({ default_role: key }),
        response: { 200: settings, 400: errorResponse },
      },
      handler: async (request) => ({ default_role: await service.setDefaultRole(tenantOf(request).id, actorOf(request), request.body.default_role) }),
    });

    // An organization's own roles: platform keys and that organization's keys.
    r.get('/organizations/:orgId/roles', {
      config: {
        permission: 'roles:read',
        access: 'organization',
        operation: { operationId: 'listOrganizationRoles', ok: "A page of the organization's own roles" },
      },
      schema: {
        summary: "List an organization's own roles",
        params: orgParams,
        querystring: roleList.query,
        response: { 200: pageResponse(roleSchema), 404: errorResponse },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        return roleList.page((await service.list(tenantOf(request).id, request.params.orgId, after, limit + 1)).map(roleView), limit, (x) => x.key);
      },
    });
    r.post('/organizations/:orgId/roles', {
      config: {
        permission: 'roles:write',
        access: 'organization',
        operation: { operationId: 'createOrganizationRole', ok: 'The role defined', errors: [409] },
      },
      schema: {
        summary: 'Define a role of the organization (overrides a tenant-wide role of the same key there)',
        params: orgParams,
        body: createBody,
        response: { 201: roleSchema, 400: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) =>
        reply.code(201).send(roleView(await service.create(tenantOf(request).id, actorOf(request), request.params.orgId, request.body))),
    });
    r.get('/organizations/:orgId/roles/:roleKey', {
      config: { permission: 'roles:read', access: 'organization', operation: { operationId: 'getOrganizationRole', ok: 'The role' } },
      schema: { summary: "Get an organization's own role", params: orgKeyParams, response: { 200: roleSchema, 404: errorResponse } },
      handler: async (request) => roleView(await service.get(tenantOf(request).id, request.params.orgId, request.params.roleKey)),
    });
    r.patch('/organizations/:orgId/roles/:roleKey', {
      config: { permission: 'roles:write', access: 'organization', operation: { operationId: 'updateOrganizationRole', ok: 'The role as updated' } },
      schema: {
        summary: "Change an organization's own role",
        params: orgKeyParams,
        body: patchBody,
        response: { 200: roleSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) =>
        roleView(await service.update(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.roleKey, request.body)),
    });
    r.delete('/organizations/:orgId/roles/:roleKey', {
      config: {
        permission: 'roles:write',
        access: 'organization',
        operation: { operationId: 'deleteOrganizationRole', ok: 'Deleted (its holders given the role ?reassign= names)', errors: [409] },
      },
      schema: {
        summary: "Delete an organization's own role (409 while members hold it, unless ?reassign=<key>)",
        params: orgKeyParams,
        querystring: deleteQuery,
        response: { 204: z.undefined(), 400: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.roleKey, request.query.reassign);
        return reply.code(204).send();
      },
    });

    // Machine clients in an organization: an organization's key binds clients to its own organization only.
    r.get('/organizations/:orgId/client_grants', {
      config: {
        permission: 'roles:read',
        access: 'organization',
        operation: { operationId: 'listClientGrants', ok: 'A page of the clients bound to the organization, with their roles there' },
      },
      schema: {
        summary: 'List the client_credentials clients bound to an organization',
        params: orgParams,
        querystring: grantList.query,
        response: { 200: pageResponse(clientGrantSchema), 404: errorResponse },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await clientGrants.list(tenantOf(request).id, request.params.orgId, after, limit + 1);
        return grantList.page(rows.map(clientGrantView), limit, (g) => g.client_id);
      },
    });
    r.get('/organizations/:orgId/client_grants/:clientId', {
      config: { permission: 'roles:read', access: 'organization', operation: { operationId: 'getClientGrant', ok: "The client's roles in the organization" } },
      schema: { summary: "A bound client's roles in the organization", params: grantParams, response: { 200: clientGrantSchema, 404: errorResponse } },
      handler: async (request) => clientGrantView(await clientGrants.get(tenantOf(request).id, request.params.orgId, request.params.clientId)),
    });
    r.put('/organizations/:orgId/client_grants/:clientId', {
      config: {
        permission: 'roles:write',
        access: 'organization',
        operation: { operationId: 'setClientGrant', ok: 'The client bound to the organization with these roles', errors: [409] },
      },
      schema: {
        summary: 'Bind a client_credentials client to the organization with roles there (or change its roles)',
        description:
          "Its client_credentials tokens then carry `org_id`, `org_roles` and `permissions`. A client is bound to one organization at most (409 while another holds it). Only a platform key binds a client; an organization's key changes the roles of a client already bound to its organization (403 otherwise).",
        params: grantParams,
        body: z.strictObject({ roles: z.array(key).min(1).max(50) }),
        response: { 200: clientGrantSchema, 400: errorResponse, 403: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request) =>
        clientGrantView(
          await clientGrants.put(
            tenantOf(request).id,
            actorOf(request),
            request.params.orgId,
            request.params.clientId,
            request.body.roles,
            principalOf(request).organizationId !== null,
          ),
        ),
    });
    r.delete('/organizations/:orgId/client_grants/:clientId', {
      config: {
        permission: 'roles:write',
        access: 'organization',
        operation: { operationId: 'deleteClientGrant', ok: "Unbound: the client's next token carries no organization" },
      },
      schema: { summary: 'Unbind a client from the organization', params: grantParams, response: { 204: z.undefined(), 404: errorResponse } },
      handler: async (request, reply) => {
        await clientGrants.delete(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.clientId);
        return reply.code(204).send();
      },
    });

    // Platform keys: the check reads any organization's memberships.
    r.post('/authorize_check', {
      config: {
        permission: 'roles:read',
        access: 'platform',
        operation: { operationId: 'authorizeCheck', ok: "Whether the user's roles in the organization grant the permission" },
      },
      schema: {
        summary: "Check a permission against a member's roles now (for backends that do not read tokens)",
        body: checkBody,
        response: { 200: checkResult, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) =>
        service.check(tenantOf(request).id, {
          userId: request.body.user_id,
          organizationId: request.body.organization_id,
          permission: request.body.permission,
          resource: request.body.resource,
        }),
    });
  },
});
