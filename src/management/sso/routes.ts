import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { ROLE_KEY } from '../members/service.js';
import { actorOf } from '../principal.js';
import { ssoConnectionView } from './service.js';

const connectionSchema = z.object({
  id: z.string(),
  organization_id: z.string(),
  protocol: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  default_role: z.string(),
  group_roles: z.record(z.string(), z.string()),
  trust_idp_mfa: z.boolean().describe("The IdP's own MFA statement (OIDC amr/acr, SAML AuthnContextClassRef) satisfies the MFA policy"),
  oidc: z
    .object({
      issuer: z.string(),
      client_id: z.string(),
      has_client_secret: z.boolean(),
      scopes: z.array(z.string()),
      pkce: z.boolean(),
      claims: z.object({ email: z.string(), name: z.string(), groups: z.string() }),
      id_token_signed_response_alg: z.string(),
      token_endpoint_auth_method: z.string(),
      redirect_uri: z.string(),
    })
    .optional()
    .describe('OIDC settings (protocol `oidc`)'),
  saml: z
    .object({
      idp_entity_id: z.string(),
      idp_sso_url: z.string(),
      idp_certificates: z.array(z.object({ fingerprint_sha256: z.string(), not_after: z.string() })),
      metadata_url: z.string().nullable(),
      sp_entity_id: z.string(),
      acs_url: z.string(),
      sp_metadata_url: z.string(),
      allow_signed_response: z.boolean(),
      attributes: z.object({ email: z.string(), name: z.string(), groups: z.string(), email_verified: z.string().nullable() }),
    })
    .optional()
    .describe('SAML 2.0 settings (protocol `saml`)'),
  created_at: z.string(),
  updated_at: z.string(),
});

const name = z.string().trim().min(1).max(200);
const role = z.string().regex(ROLE_KEY, 'must be a role key');
const groupRoles = z.record(z.string().trim().min(1).max(256), role).refine((m) => Object.keys(m).length <= 100, 'at most 100 groups');
const claimName = z.string().regex(/^[A-Za-z0-9_:.\-/]{1,100}$/, 'must be a claim name');
const scope = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/, 'must be a scope token (RFC 6749 §3.3)');
const oidcFields = {
  issuer: z.string().max(2048),
  client_id: z.string().min(1).max(255),
  client_secret: z.string().min(1).max(1024).nullable(),
  scopes: z.array(scope).min(1).max(20),
  pkce: z.boolean(),
  claims: z.strictObject({ email: claimName.optional(), name: claimName.optional(), groups: claimName.optional() }),
};
const oidcCreate = z.strictObject({
  ...oidcFields,
  client_secret: oidcFields.client_secret.optional(),
  scopes: oidcFields.scopes.optional(),
  pkce: oidcFields.pkce.optional(),
  claims: oidcFields.claims.optional(),
});
const oidcPatch = z.strictObject(
  Object.fromEntries(Object.entries(oidcFields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof oidcFields]: z.ZodOptional<(typeof oidcFields)[K]>;
  },
);

const attributeName = z.string().trim().min(1).max(256);
const samlFields = {
  metadata_xml: z.string().min(1).describe('The IdP metadata document (at most 256 KiB)'),
  metadata_url: z.string().max(2048).describe('Where to fetch the IdP metadata (through the egress policy)'),
  sp_entity_id: z.string().trim().min(1).max(1024).nullable().describe('The SP entity id (the audience); default `<issuer>/sso/saml/<id>/metadata`'),
  allow_signed_response: z.boolean().describe('A signed Response is enough even when its assertion is unsigned (default false)'),
  attributes: z.strictObject({
    email: attributeName.optional(),
    name: attributeName.optional(),
    groups: attributeName.optional(),
    email_verified: attributeName
      .nullable()
      .optional()
      .describe('An attribute whose value `true` says the IdP verified the email; null: the verified-domain rule'),
  }),
};
const samlInput = z.strictObject(
  Object.fromEntries(Object.entries(samlFields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof samlFields]: z.ZodOptional<(typeof samlFields)[K]>;
  },
);
const trustIdpMfa = z.boolean().describe("Count the IdP's own MFA statement as the second factor (default false; docs/sso.md)");
const common = {
  name,
  enabled: z.boolean().optional(),
  default_role: role.optional(),
  group_roles: groupRoles.optional(),
  trust_idp_mfa: trustIdpMfa.optional(),
};

const orgParams = z.strictObject({ orgId: idOf('org') });
const connParams = z.strictObject({ orgId: idOf('org'), connectionId: idOf('sso') });
const connectionList = listing('sso_connections');
const read = { permission: 'sso:read', access: 'organization' } as const;
const write = { permission: 'sso:write', access: 'organization' } as const;

export const ssoFeature = defineFeature({
  tags: [{ name: 'sso', description: 'Enterprise SSO connections (OIDC, SAML) per organization' }],
  routes: (r, { sso: service }) => {
    r.post('/organizations/:orgId/sso/connections', {
      config: {
        ...write,
        operation: {
          operationId: 'createSsoConnection',
          ok: 'The connection created (an OIDC client secret is never returned; SAML shows the IdP certificates and the SP URLs to register)',
        },
      },
      schema: {
        summary: 'Create an SSO connection (OIDC: the issuer is discovered now, the client secret is never returned; SAML: the IdP metadata is imported now)',
        params: orgParams,
        body: z.discriminatedUnion('protocol', [
          z.strictObject({ protocol: z.literal('oidc'), ...common, oidc: oidcCreate }),
          z.strictObject({ protocol: z.literal('saml'), ...common, saml: samlInput }),
        ]),
        response: { 201: connectionSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request, reply) => {
        const tenant = tenantOf(request);
        const c = await service.create(tenant.id, actorOf(request), request.params.orgId, request.body);
        return reply.code(201).send(ssoConnectionView(c, tenant.issuer));
      },
    });

    r.get('/organizations/:orgId/sso/connections', {
      config: { ...read, operation: { operationId: 'listSsoConnections', ok: "The organization's SSO connections" } },
      schema: {
        summary: "The organization's SSO connections",
        params: orgParams,
        querystring: connectionList.query,
        response: { 200: pageResponse(connectionSchema), 404: errorResponse },
      },
      handler: async (request) => {
        const tenant = tenantOf(request);
        const all = (await service.list(tenant.id, request.params.orgId)).map((c) => ssoConnectionView(c, tenant.issuer));
        return connectionList.pageAll(all, request.query, (c) => c.id);
      },
    });

    r.get('/organizations/:orgId/sso/connections/:connectionId', {
      config: { ...read, operation: { operationId: 'getSsoConnection', ok: 'The connection' } },
      schema: { summary: 'Get an SSO connection', params: connParams, response: { 200: connectionSchema, 404: errorResponse } },
      handler: async (request) => {
        const tenant = tenantOf(request);
        return ssoConnectionView(await service.get(tenant.id, request.params.orgId, request.params.connectionId), tenant.issuer);
      },
    });

    r.patch('/organizations/:orgId/sso/connections/:connectionId', {
      config: { ...write, operation: { operationId: 'updateSsoConnection', ok: 'The connection as updated' } },
      schema: {
        summary: 'Change an SSO connection (a new issuer is discovered again; client_secret null removes it; new SAML metadata is imported again)',
        params: connParams,
        body: z.strictObject({
          name: name.optional(),
          enabled: z.boolean().optional(),
          default_role: role.optional(),
          group_roles: groupRoles.optional(),
          trust_idp_mfa: trustIdpMfa.optional(),
          oidc: oidcPatch.optional(),
          saml: samlInput.optional(),
        }),
        response: { 200: connectionSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => {
        const tenant = tenantOf(request);
        return ssoConnectionView(
          await service.update(tenant.id, actorOf(request), request.params.orgId, request.params.connectionId, request.body),
          tenant.issuer,
        );
      },
    });

    r.delete('/organizations/:orgId/sso/connections/:connectionId', {
      config: { ...write, operation: { operationId: 'deleteSsoConnection', ok: 'Removed' } },
      schema: { summary: 'Delete an SSO connection (users it created stay)', params: connParams, response: { 204: z.undefined(), 404: errorResponse } },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.connectionId);
        return reply.code(204).send();
      },
    });
  },
});
