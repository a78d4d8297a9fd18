import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { ROLE_KEY } from '../members/service.js';
import { actorOf } from '../principal.js';
import { INVITATION_TTL_DEFAULT, INVITATION_TTL_MAX, INVITATION_TTL_MIN } from './service.js';

export const invitationSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    email: z.string(),
    roles: z.array(z.string()),
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
    expires_at: z.string(),
    created_at: z.string(),
    sent_at: z.string().meta({ description: 'When the latest link was sent (creation or resend)' }),
    accepted_at: z.string().nullable(),
    accepted_by: z.string().nullable().meta({ description: 'The user who accepted' }),
    revoked_at: z.string().nullable(),
  })
  .meta({ id: 'Invitation' });

const orgParams = z.strictObject({ orgId: idOf('org') });
const invitationParams = z.strictObject({ orgId: idOf('org'), invitationId: idOf('inv') });
const invitationList = listing('invitations');

/**
 * Invitations (docs/invitations.md): an organization's own keys may invite into it (they give the
 * address, so they learn nothing about the tenant's users); each invitation is one emailed link.
 */
export const invitationsFeature = defineFeature({
  tags: [{ name: 'invitations', description: 'Invite people into an organization by email: they accept on a hosted page (signing in or creating an account)' }],
  routes: (r, { invitations: service }) => {
    r.post('/organizations/:orgId/invitations', {
      config: {
        permission: 'members:write',
        access: 'organization',
        operation: { operationId: 'createOrganizationInvitation', ok: 'The invitation; its link is on its way to the address', errors: [409] },
      },
      schema: {
        summary: "Invite an email address into the organization (with the tenant's default role when `roles` is not given)",
        params: orgParams,
        body: z.strictObject({
          email: z.string().trim().max(254).email(),
          roles: z.array(z.string().regex(ROLE_KEY, 'must be a role key')).min(1).max(20).optional(),
          expires_in: z
            .number()
            .int()
            .min(INVITATION_TTL_MIN)
            .max(INVITATION_TTL_MAX)
            .optional()
            .meta({ description: `Seconds the link works (default ${INVITATION_TTL_DEFAULT}, 7 days)` }),
        }),
        response: { 201: invitationSchema, 400: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => reply.code(201).send(await service.create(tenantOf(request), actorOf(request), request.params.orgId, request.body)),
    });

    r.get('/organizations/:orgId/invitations', {
      config: {
        permission: 'members:read',
        access: 'organization',
        operation: { operationId: 'listOrganizationInvitations', ok: 'A page of invitations, newest first' },
      },
      schema: {
        summary: 'List invitations',
        params: orgParams,
        querystring: invitationList.query,
        response: { 200: pageResponse(invitationSchema), 404: errorResponse },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.list(tenantOf(request).id, request.params.orgId, after, limit + 1);
        return invitationList.page(rows, limit, (i) => i.id);
      },
    });

    r.post('/organizations/:orgId/invitations/:invitationId/resend', {
      config: {
        permission: 'members:write',
        access: 'organization',
        operation: { operationId: 'resendOrganizationInvitation', ok: 'The invitation with its new expiry; the earlier link no longer works', errors: [409] },
      },
      schema: {
        summary: 'Send a new link (also for an expired invitation); the earlier link stops working',
        params: invitationParams,
        response: { 200: invitationSchema, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request) => service.resend(tenantOf(request), actorOf(request), request.params.orgId, request.params.invitationId),
    });

    r.delete('/organizations/:orgId/invitations/:invitationId', {
      config: {
        permission: 'members:write',
        access: 'organization',
        operation: { operationId: 'revokeOrganizationInvitation', ok: 'The invitation is revoked: its link no longer works', errors: [409] },
      },
      schema: { summary: 'Revoke an invitation', params: invitationParams, response: { 204: z.undefined(), 404: errorResponse, 409: errorResponse } },
      handler: async (request, reply) => {
        await service.revoke(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.invitationId);
        return reply.code(204).send();
      },
    });
  },
});
