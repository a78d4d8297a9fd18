import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';
import { webauthnPolicyView } from './service.js';

/** Most organizations allow a handful of authenticator models; 100 bounds the check at registration. */
export const MAX_AAGUIDS = 100;

/** An AAGUID: a UUID in its 8-4-4-4-12 hex form, any version (authenticator vendors pick their own). */
const aaguid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID (8-4-4-4-12 hex digits)');

const policySchema = z.object({ organization_id: z.string(), aaguid_allowlist: z.array(z.string()).nullable(), updated_at: z.string() });
const orgParams = z.strictObject({ orgId: idOf('org') });
const tags = ['organizations'];

export const webauthnPolicyFeature = defineFeature({
  routes: (r, { webauthnPolicy: service }) => {
    r.get('/organizations/:orgId/webauthn_policy', {
      config: {
        permission: 'webauthn_policy:read',
        access: 'organization',
        operation: { operationId: 'getWebauthnPolicy', ok: "The organization's passkey AAGUID allowlist (null: unrestricted)" },
      },
      schema: { tags, summary: "Get the organization's WebAuthn policy", params: orgParams, response: { 200: policySchema, 404: errorResponse } },
      handler: async (request) => webauthnPolicyView(await service.get(tenantOf(request).id, request.params.orgId)),
    });

    r.put('/organizations/:orgId/webauthn_policy', {
      config: { permission: 'webauthn_policy:write', access: 'organization', operation: { operationId: 'setWebauthnPolicy', ok: 'The policy as stored' } },
      schema: {
        tags,
        summary: 'Set the passkey AAGUID allowlist (null: unrestricted, []: no passkeys)',
        params: orgParams,
        body: z.strictObject({ aaguid_allowlist: z.array(aaguid).max(MAX_AAGUIDS).nullable() }),
        response: { 200: policySchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) =>
        webauthnPolicyView(await service.set(tenantOf(request).id, actorOf(request), request.params.orgId, request.body.aaguid_allowlist)),
    });
  },
});
