import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { type McpRegistrationService, mcpSettingsBody } from '../../mcp/registration.js';
import { CLIENT_REGISTRATION_POLICIES } from '../../storage/repos/mcp-settings.js';
import { errorResponse } from '../common.js';

const settingsSchema = z.object({ client_registration: z.enum(CLIENT_REGISTRATION_POLICIES), client_id_metadata_documents: z.boolean() });
const tags = ['clients'];

/** The tenant's MCP client-onboarding policy (docs/mcp.md). */
export const mcpSettingsRoutes =
  (service: McpRegistrationService): FastifyPluginAsync =>
  async (app) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.get('/mcp/settings', {
      config: { permission: 'clients:read', access: 'platform' },
      schema: { tags, summary: 'How MCP clients may onboard: dynamic registration policy, Client ID Metadata Documents', response: { 200: settingsSchema } },
      handler: async (request) => service.settings(tenantOf(request).id),
    });

    r.put('/mcp/settings', {
      config: { permission: 'clients:write', access: 'platform' },
      schema: { tags, summary: 'Set how MCP clients may onboard (absent: unchanged)', body: mcpSettingsBody, response: { 200: settingsSchema, 400: errorResponse } },
      handler: async (request) => service.putSettings(tenantOf(request).id, request.body),
    });
  };
