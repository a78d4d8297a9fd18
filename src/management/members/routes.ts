import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';
import { memberView, ROLE_KEY, rolesOf } from './service.js';

const role = z.string().regex(ROLE_KEY, 'must be a role key');
const roles = z.array(role).min(1).max(20);
export const memberSchema = z
  .object({
    organization_id: z.string(),
    user_id: z.string(),
    role: z.string().meta({ description: 'The first of `roles`' }),
    roles: z.array(z.string()),
    user: z.object({ id: z.string(), email: z.string(), name: z.string().nullable() }).optional(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Member' });

const orgParams = z.strictObject({ orgId: idOf('org') });
const memberParams = z.strictObject({ orgId: idOf('org'), userId: idOf('user') });
const memberList = listing('members');

export const membersFeature = defineFeature({
  tags: [{ name: 'members', description: 'Who belongs to an organization, and with which role' }],
  routes: (r, { members: service }) => {
    r.get('/organizations/:orgId/members', {
      config: { permission: 'members:read', access: 'organization', operation: { operationId: 'listOrganizationMembers', ok: 'A page of members' } },
      schema: { summary: 'List members', params: orgParams, querystring: memberList.query, response: { 200: pageResponse(memberSchema), 404: errorResponse } },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.list(tenantOf(request).id, request.params.orgId, after, limit + 1);
        const p = memberList.page(rows, limit, (m) => m.userId);
        return { ...p, data: p.data.map(memberView) };
      },
    });

    // Users are tenant-wide: attaching an existing one (and so learning their email) is for
    // platform keys; an organization's own keys manage roles and removals.
    r.post('/organizations/:orgId/members', {
      config: {
        permission: 'members:write',
        access: 'platform',
        operation: { operationId: 'addOrganizationMember', ok: 'The membership created', errors: [409] },
      },
      schema: {
        summary: "Add a user to the organization (with the tenant's default role when neither `roles` nor `role` is given)",
        params: orgParams,
        body: z.strictObject({ user_id: idOf('user'), role: role.optional(), roles: roles.optional() }),
        response: { 201: memberSchema, 400: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => {
        const m = await service.add(tenantOf(request).id, actorOf(request), request.params.orgId, request.body.user_id, rolesOf(request.body));
        return reply.code(201).send(memberView(m));
      },
    });

    r.patch('/organizations/:orgId/members/:userId', {
      config: {
        permission: 'members:write',
        access: 'organization',
        operation: { operationId: 'updateOrganizationMember', ok: 'The membership as updated', errors: [409] },
      },
      schema: {
        summary: "Change a member's roles (an empty body changes nothing)",
        params: memberParams,
        body: z.strictObject({ role: role.optional(), roles: roles.optional() }),
        response: { 200: memberSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) =>
        memberView(await service.changeRole(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.userId, rolesOf(request.body))),
    });

    r.delete('/organizations/:orgId/members/:userId', {
      config: {
        permission: 'members:write',
        access: 'organization',
        operation: {
          operationId: 'removeOrganizationMember',
          ok: 'The user is no longer a member; their connected accounts in the organization are disconnected (and revoked upstream where supported)',
        },
      },
      schema: { summary: 'Remove a member', params: memberParams, response: { 204: z.undefined(), 404: errorResponse } },
      handler: async (request, reply) => {
        await service.remove(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.userId);
        return reply.code(204).send();
      },
    });
  },
});
