import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { MFA_POLICIES } from '../../storage/repos/mfa.js';
import { errorResponse, idOf } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';

const policy = z.enum(MFA_POLICIES);
const tenantSchema = z.object({ policy, updated_at: z.string().nullable() });
const orgSchema = z.object({ organization_id: z.string(), policy: policy.nullable(), effective_policy: policy, updated_at: z.string().nullable() });
const orgParams = z.strictObject({ orgId: idOf('org') });

export const mfaPolicyFeature = defineFeature({
  tags: [{ name: 'mfa', description: "The tenant's multi-factor sign-in policy (organizations' own are under organizations)" }],
  routes: (r, { mfaPolicy: service }) => {
    r.get('/mfa_policy', {
      config: {
        permission: 'mfa_policy:read',
        access: 'platform',
        operation: { operationId: 'getMfaPolicy', ok: "The tenant's MFA policy (optional when never set)" },
      },
      schema: { summary: "The tenant's MFA policy (optional when never set)", response: { 200: tenantSchema } },
      handler: async (request) => service.getTenant(tenantOf(request).id),
    });

    r.put('/mfa_policy', {
      config: { permission: 'mfa_policy:write', access: 'platform', operation: { operationId: 'setMfaPolicy', ok: 'The policy as stored' } },
      schema: {
        summary: "Set the tenant's MFA policy: off, optional (asked when the user has a factor) or required",
        body: z.strictObject({ policy }),
        response: { 200: tenantSchema, 400: errorResponse },
      },
      handler: async (request) => service.setTenant(tenantOf(request).id, actorOf(request), request.body.policy),
    });

    r.get('/organizations/:orgId/mfa_policy', {
      config: {
        permission: 'mfa_policy:read',
        access: 'organization',
        operation: { operationId: 'getOrganizationMfaPolicy', ok: "The organization's own MFA policy (null: none) and the one in effect for its members" },
      },
      schema: {
        tags: ['organizations'],
        summary: "The organization's MFA policy and the one in effect for its members",
        params: orgParams,
        response: { 200: orgSchema, 404: errorResponse },
      },
      handler: async (request) => service.getOrganization(tenantOf(request).id, request.params.orgId),
    });

    r.put('/organizations/:orgId/mfa_policy', {
      config: {
        permission: 'mfa_policy:write',
        access: 'organization',
        operation: { operationId: 'setOrganizationMfaPolicy', ok: 'The policy as stored and the one now in effect' },
      },
      schema: {
        tags: ['organizations'],
        summary: "Set the organization's MFA policy (null: follow the tenant's); it can raise the tenant's, never lower it",
        params: orgParams,
        body: z.strictObject({ policy: policy.nullable() }),
        response: { 200: orgSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => service.setOrganization(tenantOf(request).id, actorOf(request), request.params.orgId, request.body.policy),
    });
  },
});
