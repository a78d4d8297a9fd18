import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { mcpSettingsBody } from '../../mcp/registration.js';
import { CLIENT_REGISTRATION_POLICIES } from '../../storage/repos/mcp-settings.js';
import { errorResponse } from '../common.js';
import { defineFeature } from '../feature.js';

const settingsSchema = z.object({ client_registration: z.enum(CLIENT_REGISTRATION_POLICIES), client_id_metadata_documents: z.boolean() });
const tags = ['clients'];

/** The tenant's MCP client-onboarding policy (docs/mcp.md). */
export const mcpSettingsFeature = defineFeature({
  routes: (r, { mcp: service }) => {
    r.get('/mcp/settings', {
      config: { permission: 'clients:read', access: 'platform', operation: { operationId: 'getMcpSettings', ok: "The tenant's MCP client-onboarding policy" } },
      schema: { tags, summary: 'How MCP clients may onboard: dynamic registration policy, Client ID Metadata Documents', response: { 200: settingsSchema } },
      handler: async (request) => service.settings(tenantOf(request).id),
    });

    r.put('/mcp/settings', {
      config: { permission: 'clients:write', access: 'platform', operation: { operationId: 'setMcpSettings', ok: 'The policy as stored' } },
      schema: {
        tags,
        summary: 'Set how MCP clients may onboard (absent: unchanged)',
        body: mcpSettingsBody,
        response: { 200: settingsSchema, 400: errorResponse },
      },
      handler: async (request) => service.putSettings(tenantOf(request).id, request.body),
    });
  },
});
