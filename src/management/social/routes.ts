import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { SOCIAL_PRESET_NAMES } from '../../social/presets.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';
import { identityView, socialConnectionView } from './service.js';

const fieldsSchema = z.object({
  subject: z.string(),
  email: z.string().nullable(),
  email_verified: z.string().nullable(),
  name: z.string().nullable(),
  picture: z.string().nullable(),
});

const connectionSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(['oidc', 'oauth2']),
  preset: z.string().nullable(),
  client_id: z.string(),
  has_client_secret: z.boolean(),
  scopes: z.array(z.string()),
  sign_in: z.boolean().describe('Users with a linked identity sign in with it'),
  sign_up: z.boolean().describe('An unknown identity creates a user'),
  display_order: z.number().int(),
  redirect_uri: z.string().describe('The redirect URI to register at the provider'),
  issuer: z.string().nullable(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  userinfo_endpoint: z.string().nullable(),
  emails_endpoint: z.string().nullable(),
  token_endpoint_auth_method: z.string(),
  pkce: z.boolean(),
  response_mode: z.enum(['query', 'form_post']).describe('How the provider answers: form_post (Apple) posts code and state to the redirect URI'),
  apple: z
    .object({ team_id: z.string(), key_id: z.string() })
    .nullable()
    .describe('Sign in with Apple: the client secret is an ES256 JWT signed with the stored key (never returned)'),
  vault_provider_id: z.string().nullable().describe("The vault provider whose connected account keeps the sign-in's upstream tokens"),
  fields: fieldsSchema.describe('Where the userinfo document (or ID token) keeps each attribute (field paths)'),
  created_at: z.string(),
  updated_at: z.string(),
});

const identitySchema = z.object({
  id: z.string(),
  connection_id: z.string(),
  subject: z.string().describe("The provider's id of the person"),
  email: z.string().nullable().describe('The email as the provider said it at the last sign-in'),
  email_verified: z.boolean().describe('Whether the provider said it verified that email'),
  linked_at: z.string(),
  last_login_at: z.string(),
});

const settingsSchema = z.object({ account_linking: z.enum(['verified_email', 'manual']), updated_at: z.string().nullable() });

const name = z.string().trim().min(1).max(100);
const scope = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/, 'must be a scope token (RFC 6749 §3.3)');
const fieldPath = z.string().min(1).max(200);
const url = z.string().min(1).max(2048);
const common = {
  name: name.optional(),
  client_id: z.string().min(1).max(255),
  client_secret: z.string().min(1).max(4096).nullable().optional().describe('Sealed at rest, never returned; null: a public client (PKCE only)'),
  scopes: z.array(scope).max(20).optional(),
  sign_in: z.boolean().optional(),
  sign_up: z.boolean().optional(),
  display_order: z.number().int().min(0).max(1000).optional(),
  apple: z
    .strictObject({
      team_id: z.string().max(10),
      key_id: z.string().max(10),
      private_key: z.string().min(1).max(4096).describe('The .p8 file: an EC P-256 key in PEM (PKCS #8); sealed at rest, never returned'),
    })
    .optional()
    .describe('Sign in with Apple (the apple preset, or an OpenID provider doing the same): form_post answers and a client secret signed with this key'),
  vault_provider_id: idOf('cpr')
    .nullable()
    .optional()
    .describe(
      "A vault provider (same client_id and token endpoint): the sign-in's upstream tokens are kept as the user's connected account in the organization of the sign-in",
    ),
};
const createBody = z.strictObject({
  ...common,
  preset: z
    .enum(SOCIAL_PRESET_NAMES as [string, ...string[]])
    .optional()
    .describe('A well-known provider (docs/social.md)'),
  oidc: z.strictObject({ issuer: url }).optional().describe('A generic OpenID provider: its issuer is discovered now'),
  oauth2: z
    .strictObject({
      authorization_endpoint: url,
      token_endpoint: url,
      userinfo_endpoint: url,
      emails_endpoint: url.nullable().optional().describe("A list of the person's addresses in GitHub's /user/emails shape [{email, primary, verified}]"),
      token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post']).optional(),
      pkce: z.boolean().optional(),
      fields: z.strictObject({
        subject: fieldPath,
        email: fieldPath.optional(),
        email_verified: fieldPath.optional(),
        name: fieldPath.optional(),
        picture: fieldPath.optional(),
      }),
    })
    .optional()
    .describe('A generic OAuth 2.0 provider: its endpoints and where its userinfo document keeps each attribute'),
});
const patchBody = z.strictObject({ ...common, client_id: common.client_id.optional() });

const connParams = z.strictObject({ connectionId: idOf('soc') });
const userParams = z.strictObject({ userId: idOf('user') });
const identityParams = z.strictObject({ userId: idOf('user'), identityId: idOf('idn') });
const connectionList = listing('social_connections');
const read = { permission: 'social:read', access: 'platform' } as const;
const write = { permission: 'social:write', access: 'platform' } as const;

/** Social sign-in (docs/social.md): the tenant's connections, its account-linking setting, users' linked identities. */
export const socialFeature = defineFeature({
  tags: [{ name: 'social', description: 'Social sign-in connections (Google, GitHub, any OIDC or OAuth 2.0 provider) on the hosted login' }],
  routes: (r, { social: service }) => {
    r.post('/social_connections', {
      config: { ...write, operation: { operationId: 'createSocialConnection', ok: 'The connection created (the client secret is never returned)' } },
      schema: {
        summary: 'Create a social connection: a preset, a generic OIDC provider (issuer discovered now) or an OAuth 2.0 provider (endpoints and field paths)',
        body: createBody,
        response: { 201: connectionSchema, 400: errorResponse },
      },
      handler: async (request, reply) => {
        const tenant = tenantOf(request);
        const body = request.body as Parameters<typeof service.create>[2];
        return reply.code(201).send(socialConnectionView(await service.create(tenant.id, actorOf(request), body), tenant.issuer));
      },
    });

    r.get('/social_connections', {
      config: { ...read, operation: { operationId: 'listSocialConnections', ok: "The tenant's social connections" } },
      schema: { summary: "The tenant's social connections", querystring: connectionList.query, response: { 200: pageResponse(connectionSchema) } },
      handler: async (request) => {
        const tenant = tenantOf(request);
        const all = (await service.list(tenant.id)).map((c) => socialConnectionView(c, tenant.issuer));
        return connectionList.pageAll(all, request.query, (c) => c.id);
      },
    });

    r.get('/social_connections/:connectionId', {
      config: { ...read, operation: { operationId: 'getSocialConnection', ok: 'The connection' } },
      schema: { summary: 'Get a social connection', params: connParams, response: { 200: connectionSchema, 404: errorResponse } },
      handler: async (request) => {
        const tenant = tenantOf(request);
        return socialConnectionView(await service.get(tenant.id, request.params.connectionId), tenant.issuer);
      },
    });

    r.patch('/social_connections/:connectionId', {
      config: { ...write, operation: { operationId: 'updateSocialConnection', ok: 'The connection as updated' } },
      schema: {
        summary: 'Change a social connection (client_secret null removes it; the provider itself is fixed: create another connection)',
        params: connParams,
        body: patchBody,
        response: { 200: connectionSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => {
        const tenant = tenantOf(request);
        return socialConnectionView(await service.update(tenant.id, actorOf(request), request.params.connectionId, request.body), tenant.issuer);
      },
    });

    r.delete('/social_connections/:connectionId', {
      config: { ...write, operation: { operationId: 'deleteSocialConnection', ok: 'Removed' } },
      schema: {
        summary: 'Delete a social connection (its linked identities go with it; the users stay)',
        params: connParams,
        response: { 204: z.undefined(), 404: errorResponse },
      },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, actorOf(request), request.params.connectionId);
        return reply.code(204).send();
      },
    });

    r.get('/social_settings', {
      config: { ...read, operation: { operationId: 'getSocialSettings', ok: "The tenant's account-linking setting" } },
      schema: { summary: "The tenant's account-linking setting (verified_email when never set)", response: { 200: settingsSchema } },
      handler: async (request) => service.settings(tenantOf(request).id),
    });

    r.put('/social_settings', {
      config: { ...write, operation: { operationId: 'setSocialSettings', ok: 'The setting as stored' } },
      schema: {
        summary:
          'Set account linking: `verified_email` links a new identity to the user holding its email when both the provider and Keyhall verified it; `manual` never links automatically',
        body: z.strictObject({ account_linking: z.enum(['verified_email', 'manual']) }),
        response: { 200: settingsSchema, 400: errorResponse },
      },
      handler: async (request) => service.setSettings(tenantOf(request).id, actorOf(request), request.body.account_linking),
    });

    r.get('/users/:userId/identities', {
      config: {
        permission: 'users:read',
        access: 'platform',
        operation: { operationId: 'listUserIdentities', ok: "The user's linked identities (never a token)" },
      },
      schema: {
        summary: 'The upstream identities linked to a user (social connections)',
        tags: ['social'],
        params: userParams,
        response: { 200: z.object({ data: z.array(identitySchema) }), 404: errorResponse },
      },
      handler: async (request) => ({ data: (await service.identities(tenantOf(request).id, request.params.userId)).map(identityView) }),
    });

    r.delete('/users/:userId/identities/:identityId', {
      config: { permission: 'users:write', access: 'platform', operation: { operationId: 'unlinkUserIdentity', ok: 'Unlinked', errors: [409] } },
      schema: {
        summary: 'Unlink an upstream identity from a user (409 last_sign_in_method when the user would have no way left to sign in)',
        tags: ['social'],
        params: identityParams,
        response: { 204: z.undefined(), 404: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => {
        await service.unlink(tenantOf(request).id, actorOf(request), request.params.userId, request.params.identityId);
        return reply.code(204).send();
      },
    });
  },
});
