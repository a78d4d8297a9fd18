/** /v1/clients: OAuth client registration (RFC 7591 metadata names), tenant-wide. */
import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { actorOf } from '../principal.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { clientMetadata } from './schema.js';
import { CLIENT_PROFILES } from '../../oauth/authorize/types.js';
import { ID_TOKEN_CLAIMS_POLICIES } from '../../oauth/token/lifetimes.js';
import { CLAIM_TARGETS } from '../../oauth/claims-mapping.js';

const clientList = listing('clients');

export const clientSchema = z
  .object({
    client_id: z.string(),
    client_id_issued_at: z.number(),
    client_secret: z.string().optional(),
    client_secret_expires_at: z.number().optional(),
    client_name: z.string().nullable(),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.string()),
    token_endpoint_auth_method: z.string(),
    token_endpoint_auth_method_strict: z.boolean().describe('Secret clients: the secret is accepted only by the registered method'),
    jwks: z.unknown(),
    jwks_uri: z.string().nullable(),
    scope: z.string().nullable(),
    dpop_bound_access_tokens: z.boolean(),
    allowed_resources: z.array(z.string()),
    allowed_origins: z.array(z.string()),
    token_exchange: z.unknown(),
    id_token_signed_response_alg: z.enum(['RS256', 'EdDSA']),
    require_pushed_authorization_requests: z.boolean(),
    post_logout_redirect_uris: z.array(z.string()),
    third_party: z.boolean(),
    backchannel_logout_uri: z
      .string()
      .nullable()
      .describe('OpenID Connect Back-Channel Logout: where a Logout Token is POSTed when a session the client received tokens in ends'),
    backchannel_logout_session_required: z.boolean().describe('The client requires `sid` in logout tokens (always sent)'),
    require_signed_request_object: z.boolean().describe('RFC 9101 §10.5: authorization requests only as signed request objects (`request`)'),
    profile: z
      .enum(CLIENT_PROFILES)
      .nullable()
      .describe('`fapi2`: the FAPI 2.0 Security Profile (PAR, PKCE, DPoP, private_key_jwt, 60-second codes); null: none'),
    claims: z
      .array(z.object({ claim: z.string(), from: z.string(), tokens: z.array(z.enum(CLAIM_TARGETS)) }))
      .describe('Extra claims from user fields and metadata: `from` is a user field or a metadata path (docs/authorization.md)'),
  })
  .meta({ id: 'Client' });

const settingsBody = z.strictObject({
  access_token_ttl_seconds: z
    .number()
    .int()
    .min(30)
    .max(24 * 3600)
    .nullable(),
  refresh_token_ttl_seconds: z
    .number()
    .int()
    .min(60)
    .max(365 * 24 * 3600)
    .nullable(),
  // Absent: unchanged (older callers send only the lifetimes); null: the default, `scoped`.
  id_token_claims: z.enum(ID_TOKEN_CLAIMS_POLICIES).nullable().optional(),
});
const settingsSchema = settingsBody
  .extend({
    id_token_claims: z.enum(ID_TOKEN_CLAIMS_POLICIES).nullable(),
    effective: z.object({ access_token_ttl_seconds: z.number(), refresh_token_ttl_seconds: z.number(), id_token_claims: z.enum(ID_TOKEN_CLAIMS_POLICIES) }),
  })
  .meta({ id: 'OAuthSettings' });
const params = z.strictObject({ clientId: idOf('cli') });

export const clientsFeature = defineFeature({
  tags: [{ name: 'clients', description: 'OAuth 2.0 / OpenID Connect clients and token settings' }],
  routes: (r, { clients: service, tokenSettings: settings }) => {
    r.post('/clients', {
      config: {
        permission: 'clients:write',
        access: 'platform',
        operation: { operationId: 'createClient', ok: 'The client registered; a secret-based client gets `client_secret` only here' },
      },
      schema: {
        summary: 'Register an OAuth client; a secret-based client gets client_secret in this response only',
        body: clientMetadata,
        response: { 201: clientSchema, 400: errorResponse },
      },
      handler: async (request, reply) => reply.code(201).send(await service.create(tenantOf(request).id, request.body, actorOf(request))),
    });

    r.get('/clients', {
      config: { permission: 'clients:read', access: 'platform', operation: { operationId: 'listClients', ok: 'A page of OAuth clients' } },
      schema: { summary: 'List OAuth clients (never their secrets)', querystring: clientList.query, response: { 200: pageResponse(clientSchema) } },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.list(tenantOf(request).id, { after, limit: limit + 1 });
        return clientList.page(rows, limit, (c) => c.client_id);
      },
    });

    r.get('/clients/:clientId', {
      config: { permission: 'clients:read', access: 'platform', operation: { operationId: 'getClient', ok: 'The client' } },
      schema: { summary: 'Get an OAuth client', params, response: { 200: clientSchema, 404: errorResponse } },
      handler: async (request) => service.get(tenantOf(request).id, request.params.clientId),
    });

    r.patch('/clients/:clientId', {
      config: { permission: 'clients:write', access: 'platform', operation: { operationId: 'updateClient', ok: 'The client as updated' } },
      schema: { summary: 'Change client metadata', params, body: clientMetadata, response: { 200: clientSchema, 400: errorResponse, 404: errorResponse } },
      handler: async (request) => service.update(tenantOf(request).id, request.params.clientId, request.body, actorOf(request)),
    });

    r.delete('/clients/:clientId', {
      config: { permission: 'clients:write', access: 'platform', operation: { operationId: 'deleteClient', ok: 'Deleted, with its refresh tokens' } },
      schema: { summary: 'Delete a client and its refresh tokens', params, response: { 204: z.undefined(), 404: errorResponse } },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, request.params.clientId, actorOf(request));
        return reply.code(204).send();
      },
    });

    r.post('/clients/:clientId/secret', {
      config: {
        permission: 'clients:write',
        access: 'platform',
        operation: { operationId: 'rotateClientSecret', ok: 'The client with its new `client_secret`, shown only here' },
      },
      schema: {
        summary: 'Rotate the client secret (the old one stops working at once)',
        params,
        response: { 200: clientSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => service.rotateSecret(tenantOf(request).id, request.params.clientId, actorOf(request)),
    });

    r.get('/oauth/settings', {
      config: {
        permission: 'clients:read',
        access: 'platform',
        operation: { operationId: 'getOAuthSettings', ok: "The tenant's OAuth settings and the values in effect" },
      },
      schema: { summary: "The tenant's OAuth settings: token lifetimes, ID-token claims (null: the default)", response: { 200: settingsSchema } },
      handler: async (request) => settings.get(tenantOf(request).id),
    });

    r.put('/oauth/settings', {
      config: {
        permission: 'clients:write',
        access: 'platform',
        operation: { operationId: 'setOAuthSettings', ok: 'The settings as stored and the values in effect' },
      },
      schema: {
        summary: "Set the tenant's OAuth settings (null: the default; id_token_claims absent: unchanged)",
        body: settingsBody,
        response: { 200: settingsSchema, 400: errorResponse },
      },
      handler: async (request) => settings.put(tenantOf(request).id, request.body, actorOf(request)),
    });
  },
});
