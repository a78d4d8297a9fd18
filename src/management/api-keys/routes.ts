import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { principalOf } from '../principal.js';
import { type ApiKeyService, apiKeyView } from './service.js';

const createBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  scopes: z.array(z.string().max(64)).min(1).max(64),
});

export const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(z.string()),
    organization_id: z.string().nullable(),
    key_prefix: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
  })
  .meta({ id: 'ApiKey' });
const createdSchema = apiKeySchema.omit({ key_prefix: true, last_used_at: true }).extend({ key: z.string() }).meta({ id: 'CreatedApiKey' });

const apiKeyList = listing('api_keys');
const orgParams = z.strictObject({ orgId: idOf('org') });
const orgKeyParams = z.strictObject({ orgId: idOf('org'), keyId: idOf('key') });
const keyParams = z.strictObject({ keyId: idOf('key') });
const createResponses = { 201: createdSchema, 400: errorResponse, 403: errorResponse, 404: errorResponse };

export const apiKeysFeature = defineFeature({
  tags: [{ name: 'api keys', description: 'Platform- and organization-bound API keys for /v1' }],
  routes: (r, { apiKeys: service }) => {
    const created = (m: Awaited<ReturnType<ApiKeyService['create']>>) => {
      const { key_prefix: _p, last_used_at: _l, ...view } = apiKeyView(m.record);
      return { ...view, key: m.key };
    };

    r.post('/organizations/:orgId/api_keys', {
      config: {
        permission: 'api_keys:write',
        access: 'organization',
        operation: { operationId: 'createOrganizationApiKey', ok: 'The API key created; `key` appears only in this response' },
      },
      schema: { summary: 'Mint an organization-bound API key (the key is shown only here)', params: orgParams, body: createBody, response: createResponses },
      handler: async (request, reply) => reply.code(201).send(created(await service.create(principalOf(request), request.params.orgId, request.body))),
    });

    r.post('/api_keys', {
      config: {
        permission: 'api_keys:write',
        access: 'any',
        operation: { operationId: 'createApiKey', ok: 'The API key created; `key` appears only in this response' },
      },
      schema: { summary: 'Mint a platform-bound API key (the key is shown only here)', body: createBody, response: createResponses },
      handler: async (request, reply) => reply.code(201).send(created(await service.create(principalOf(request), null, request.body))),
    });

    r.get('/organizations/:orgId/api_keys', {
      config: {
        permission: 'api_keys:read',
        access: 'organization',
        operation: { operationId: 'listOrganizationApiKeys', ok: "A page of the organization's live API keys (never the keys themselves)" },
      },
      schema: {
        summary: "List an organization's live API keys",
        params: orgParams,
        querystring: apiKeyList.query,
        response: { 200: pageResponse(apiKeySchema) },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const p = apiKeyList.page(await service.list(tenantOf(request).id, request.params.orgId, after, limit + 1), limit, (k) => k.id);
        return { ...p, data: p.data.map(apiKeyView) };
      },
    });

    r.get('/api_keys', {
      config: {
        permission: 'api_keys:read',
        access: 'platform',
        operation: { operationId: 'listApiKeys', ok: 'A page of live platform-bound API keys (never the keys themselves)' },
      },
      schema: { summary: 'List live platform-bound API keys', querystring: apiKeyList.query, response: { 200: pageResponse(apiKeySchema) } },
      handler: async (request) => {
        const { limit, after } = request.query;
        const p = apiKeyList.page(await service.list(tenantOf(request).id, null, after, limit + 1), limit, (k) => k.id);
        return { ...p, data: p.data.map(apiKeyView) };
      },
    });

    r.delete('/organizations/:orgId/api_keys/:keyId', {
      config: {
        permission: 'api_keys:write',
        access: 'organization',
        operation: { operationId: 'revokeOrganizationApiKey', ok: 'Revoked, at once on every instance' },
      },
      schema: {
        summary: 'Revoke an organization-bound API key (immediately, everywhere)',
        params: orgKeyParams,
        response: { 204: z.undefined(), 404: errorResponse },
      },
      handler: async (request, reply) => {
        await service.revoke(principalOf(request), request.params.orgId, request.params.keyId);
        return reply.code(204).send();
      },
    });

    r.delete('/api_keys/:keyId', {
      config: {
        permission: 'api_keys:write',
        access: 'platform',
        operation: { operationId: 'revokeApiKey', ok: 'Revoked, at once on every instance', errors: [409] },
      },
      schema: { summary: 'Revoke a platform-bound API key', params: keyParams, response: { 204: z.undefined(), 404: errorResponse } },
      handler: async (request, reply) => {
        await service.revoke(principalOf(request), null, request.params.keyId);
        return reply.code(204).send();
      },
    });
  },
});
