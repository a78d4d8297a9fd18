import { z } from 'zod';
import { PRESET_NAMES, type PresetName } from '../../upstream/presets.js';
import { providerView } from '../../connect/providers.js';
import { accountView } from '../../connect/vault.js';
import { tenantOf } from '../../http/tenant.js';
import { errors } from '../../kernel/errors.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf, principalOf } from '../principal.js';

const url = z.string().min(1).max(2048);
/** One OAuth scope token (RFC 6749 §3.3): printable ASCII without space, quote or backslash. */
const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/, 'must be a scope token (RFC 6749 §3.3)');
const paramName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be a parameter name of letters, digits, _ . -');

const providerFields = {
  name: z.string().trim().min(1).max(100),
  type: z.enum(['oauth2', 'oidc']),
  issuer: url.nullable(),
  authorization_endpoint: url,
  token_endpoint: url,
  revocation_endpoint: url.nullable(),
  client_id: z.string().min(1).max(255),
  client_secret: z.string().min(1).max(1000).nullable(),
  token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post', 'none']),
  scopes: z.array(scopeToken).max(50),
  pkce: z.boolean(),
  authorize_params: z.record(paramName, z.string().max(500)).refine((o) => Object.keys(o).length <= 20, 'at most 20 parameters'),
  userinfo_endpoint: url.nullable().describe('oauth2: a userinfo endpoint naming the upstream account (read when no ID token does)'),
  subject_field: z.string().min(1).max(200).nullable().describe('oauth2: the field path of the subject in the userinfo document (`id`, `user.id`)'),
};

const presetName = z.enum(PRESET_NAMES as [PresetName, ...PresetName[]]);
const createBody = z
  .strictObject({ ...providerFields, preset: presetName })
  .partial()
  .required({ name: true, client_id: true });
const patchBody = z
  .strictObject({ ...providerFields, preset: presetName })
  .partial()
  .refine((o) => Object.keys(o).length > 0, 'give at least one field to change');

const providerSchema = z.object({
  provider_id: z.string(),
  name: z.string(),
  preset: z.string().nullable(),
  type: z.string(),
  issuer: z.string().nullable(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  revocation_endpoint: z.string().nullable(),
  client_id: z.string(),
  has_client_secret: z.boolean(),
  token_endpoint_auth_method: z.string(),
  scopes: z.array(z.string()),
  pkce: z.boolean(),
  authorize_params: z.record(z.string(), z.string()),
  userinfo_endpoint: z.string().nullable(),
  subject_field: z.string().nullable(),
  redirect_uri: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const accountSchema = z.object({
  account_id: z.string(),
  organization_id: z.string(),
  user_id: z.string(),
  provider_id: z.string(),
  subject: z.string().nullable(),
  scopes: z.array(z.string()),
  status: z.string(),
  expires_at: z.number().nullable(),
  last_refreshed_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

const providerParams = z.strictObject({ providerId: idOf('cpr') });
const orgParams = z.strictObject({ orgId: idOf('org') });
// Any account id reaches the vault, which answers account_not_found (and audits the attempt).
const accountParams = z.strictObject({ orgId: idOf('org'), accountId: z.string().max(64) });

export const connectFeature = defineFeature({
  tags: [
    { name: 'connect providers', description: 'Upstream OAuth providers of the connected-accounts vault' },
    { name: 'connected accounts', description: "Users' connected upstream accounts and live access tokens from the vault" },
  ],
  routes: (r, { connectProviders: providers, vault }) => {
    const ptags = ['connect providers'];
    const providerList = listing('connect_providers');
    const accountList = listing('connected_accounts');
    const atags = ['connected accounts'];

    r.post('/connect/providers', {
      config: {
        permission: 'connect_providers:write',
        access: 'platform',
        operation: { operationId: 'createConnectProvider', ok: 'The provider registered (its client secret is never returned)' },
      },
      schema: {
        tags: ptags,
        summary: 'Register an upstream provider (the client secret is stored encrypted, never returned)',
        body: createBody,
        response: { 201: providerSchema, 400: errorResponse },
      },
      handler: async (request, reply) => {
        const tenant = tenantOf(request);
        const p = await providers.create(tenant.id, actorOf(request), request.body);
        return reply.code(201).send(providerView(p, tenant.issuer));
      },
    });

    r.get('/connect/providers', {
      config: {
        permission: 'connect_providers:read',
        access: 'platform',
        operation: { operationId: 'listConnectProviders', ok: 'A page of upstream providers' },
      },
      schema: { tags: ptags, summary: 'List upstream providers', querystring: providerList.query, response: { 200: pageResponse(providerSchema) } },
      handler: async (request) => {
        const tenant = tenantOf(request);
        const { limit, after } = request.query;
        const p = providerList.page(await providers.list(tenant.id, { after, limit: limit + 1 }), limit, (x) => x.id);
        return { ...p, data: p.data.map((x) => providerView(x, tenant.issuer)) };
      },
    });

    r.get('/connect/providers/:providerId', {
      config: { permission: 'connect_providers:read', access: 'platform', operation: { operationId: 'getConnectProvider', ok: 'The provider' } },
      schema: { tags: ptags, summary: 'Get an upstream provider', params: providerParams, response: { 200: providerSchema, 404: errorResponse } },
      handler: async (request) => providerView(await providers.get(tenantOf(request).id, request.params.providerId), tenantOf(request).issuer),
    });

    r.patch('/connect/providers/:providerId', {
      config: { permission: 'connect_providers:write', access: 'platform', operation: { operationId: 'updateConnectProvider', ok: 'The provider as updated' } },
      schema: {
        tags: ptags,
        summary: 'Change an upstream provider (URLs are checked again)',
        params: providerParams,
        body: patchBody,
        response: { 200: providerSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => {
        const tenant = tenantOf(request);
        return providerView(await providers.update(tenant.id, actorOf(request), request.params.providerId, request.body), tenant.issuer);
      },
    });

    r.delete('/connect/providers/:providerId', {
      config: { permission: 'connect_providers:write', access: 'platform', operation: { operationId: 'deleteConnectProvider', ok: 'Removed', errors: [409] } },
      schema: {
        tags: ptags,
        summary: 'Remove an upstream provider (refused while accounts use it)',
        params: providerParams,
        response: { 204: z.undefined(), 404: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => {
        await providers.delete(tenantOf(request).id, actorOf(request), request.params.providerId);
        return reply.code(204).send();
      },
    });

    r.get('/organizations/:orgId/connect/accounts', {
      config: {
        permission: 'connected_accounts:read',
        access: 'organization',
        operation: { operationId: 'listConnectedAccounts', ok: "A page of the organization's connected accounts (never a token)" },
      },
      schema: {
        tags: atags,
        summary: "The organization's connected accounts (never a token)",
        params: orgParams,
        querystring: accountList.query.extend({
          user_id: z.string().max(64).optional(),
          provider_id: z.string().max(64).optional(),
          status: z.enum(['active', 'needs_reauthorization']).optional(),
        }),
        response: { 200: pageResponse(accountSchema) },
      },
      handler: async (request) => {
        const { limit, after, user_id, provider_id, status } = request.query;
        const rows = await vault.list(tenantOf(request).id, request.params.orgId, {
          userId: user_id,
          providerId: provider_id,
          status,
          after,
          limit: limit + 1,
        });
        const p = accountList.page(rows, limit, (x) => x.id);
        return { ...p, data: p.data.map(accountView) };
      },
    });

    r.get('/organizations/:orgId/connect/accounts/:accountId', {
      config: {
        permission: 'connected_accounts:read',
        access: 'organization',
        operation: { operationId: 'getConnectedAccount', ok: 'The connected account (never a token)' },
      },
      schema: { tags: atags, summary: 'Get a connected account (never a token)', params: accountParams, response: { 200: accountSchema, 404: errorResponse } },
      handler: async (request) => accountView(await vault.get(tenantOf(request).id, request.params.orgId, request.params.accountId)),
    });

    r.delete('/organizations/:orgId/connect/accounts/:accountId', {
      config: {
        permission: 'connected_accounts:write',
        access: 'organization',
        operation: { operationId: 'deleteConnectedAccount', ok: 'Removed; its tokens are revoked upstream where supported' },
      },
      schema: {
        tags: atags,
        summary: 'Remove a connected account (its tokens are revoked upstream where the provider supports RFC 7009)',
        params: accountParams,
        response: { 204: z.undefined(), 404: errorResponse },
      },
      handler: async (request, reply) => {
        await vault.remove(tenantOf(request).id, request.params.orgId, request.params.accountId, actorOf(request));
        return reply.code(204).send();
      },
    });

    r.post('/organizations/:orgId/connect/accounts/:accountId/token', {
      config: {
        permission: 'connected_accounts:token',
        access: 'organization',
        operation: {
          operationId: 'getConnectedAccountToken',
          ok: "A live upstream access token (refreshed first when near expiry) while the account's user is a member of the organization; every retrieval is audited",
          errors: [502],
        },
      },
      schema: {
        tags: atags,
        summary: 'A live access token of the account (refreshed upstream first when near expiry); every retrieval is audited',
        params: accountParams,
        response: {
          200: z.object({ access_token: z.string(), expires_at: z.number().nullable(), scopes: z.array(z.string()) }),
          404: errorResponse,
          502: errorResponse,
        },
      },
      handler: async (request, reply) => {
        const keyId = principalOf(request).keyId;
        // Tokens go to API keys only: the console shows accounts, never their tokens.
        if (keyId === null) throw errors.forbidden('retrieving a token needs an API key');
        const t = await vault.retrieve(tenantOf(request).id, request.params.orgId, request.params.accountId, { type: 'api_key', keyId });
        return reply
          .header('cache-control', 'no-store')
          .header('pragma', 'no-cache')
          .send({ access_token: t.accessToken, expires_at: t.expiresAt, scopes: t.scopes });
      },
    });
  },
});
