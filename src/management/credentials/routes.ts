import { z } from 'zod';
import { CLAIM_TYPES, type CredentialTypeRecord, type IssuedCredentialRecord, TX_CODE_INPUT_MODES } from '../../credentials/types.js';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, iso, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';

const configurationId = z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, 'must be a letter then up to 63 letters, digits, _ . or -');
const claimName = z.string().regex(/^[a-z_][a-z0-9_]{0,63}$/, 'must be a claim name (lower case, digits, _)');
const RESERVED_CLAIMS = ['iss', 'sub', 'iat', 'exp', 'nbf', 'vct', 'cnf', 'status', 'jti', 'aud', '_sd', '_sd_alg'];

const claimSpec = z.strictObject({ type: z.enum(CLAIM_TYPES), mandatory: z.boolean().default(false), display_name: z.string().min(1).max(200).optional() });
const typeBody = z.strictObject({
  id: configurationId,
  vct: z.string().min(1).max(2000),
  display_name: z.string().min(1).max(200),
  claims: z
    .record(claimName, claimSpec)
    .refine((c) => Object.keys(c).length >= 1 && Object.keys(c).length <= 50, 'must define 1 to 50 claims')
    .refine((c) => !Object.keys(c).some((k) => RESERVED_CLAIMS.includes(k)), `claim names may not be ${RESERVED_CLAIMS.join(', ')}`),
  lifetime_seconds: z
    .number()
    .int()
    .min(60)
    .max(10 * 365 * 24 * 3600),
});
const typeView = z.object({
  id: z.string(),
  vct: z.string(),
  display_name: z.string(),
  claims: z.record(z.string(), z.object({ type: z.string(), mandatory: z.boolean(), display_name: z.string().optional() })),
  lifetime_seconds: z.number(),
  built_in: z.boolean(),
});
const typeOf = (t: CredentialTypeRecord) => ({
  id: t.id,
  vct: t.vct,
  display_name: t.displayName,
  claims: t.claims,
  lifetime_seconds: t.lifetimeSeconds,
  built_in: t.createdAt === 0,
});

const claimValue = z.union([z.string().max(2000), z.number(), z.boolean()]);
const offerBody = z.strictObject({
  credential_configuration_id: configurationId,
  subject: z.union([z.strictObject({ user_id: idOf('user') }), z.strictObject({ claims: z.record(claimName, claimValue) })]),
  tx_code: z.strictObject({ length: z.number().int().min(4).max(8).default(6), input_mode: z.enum(TX_CODE_INPUT_MODES).default('numeric') }).optional(),
});
const offerView = z.object({
  offer_id: z.string(),
  credential_offer_uri: z.string(),
  credential_offer_link: z.string(),
  credential_offer: z.record(z.string(), z.unknown()),
  tx_code: z.string().nullable(),
  expires_in: z.number(),
});

const credentialView = z.object({
  id: z.string(),
  type: z.string(),
  vct: z.string(),
  format: z.string(),
  subject: z.string(),
  user_id: z.string().nullable(),
  offer_id: z.string(),
  status: z.string(),
  status_list: z.object({ uri: z.string(), idx: z.number() }),
  issued_at: z.string(),
  expires_at: z.string(),
  revoked_at: z.string().nullable(),
});
const credentialOf = (c: IssuedCredentialRecord) => ({
  id: c.id,
  type: c.configurationId,
  vct: c.vct,
  format: c.format,
  subject: c.subject,
  user_id: c.userId,
  offer_id: c.offerId,
  status: c.status,
  status_list: { uri: c.statusUri, idx: c.statusIndex },
  issued_at: iso(c.issuedAt),
  expires_at: iso(c.expiresAt),
  revoked_at: c.revokedAt === null ? null : iso(c.revokedAt),
});

const orgParams = z.strictObject({ orgId: idOf('org') });
const vcParams = z.strictObject({ orgId: idOf('org'), vcId: idOf('vc') });
const typeParams = z.strictObject({ typeId: configurationId });
const credentialList = listing('credentials');
const typeList = listing('credential_types');

export const credentialsFeature = defineFeature({
  tags: [{ name: 'credentials', description: 'Verifiable credentials (OID4VCI, SD-JWT VC): types, offers, issued credentials and revocation' }],
  routes: (r, { credentials: service }) => {
    r.get('/credential_types', {
      config: {
        permission: 'credentials:read',
        access: 'any',
        operation: { operationId: 'listCredentialTypes', ok: 'The credential types, the built-in OrganizationMembership included' },
      },
      schema: {
        summary: 'List credential types (the built-in OrganizationMembership first)',
        querystring: typeList.query,
        response: { 200: pageResponse(typeView) },
      },
      // Built-in types sort first: the cursor key is the type id behind a built-in marker.
      handler: async (request) =>
        typeList.pageAll((await service.listTypes(tenantOf(request).id)).map(typeOf), request.query, (t) => `${t.built_in ? 0 : 1}${t.id}`),
    });

    r.post('/credential_types', {
      config: {
        permission: 'credentials:issue',
        access: 'platform',
        operation: { operationId: 'createCredentialType', ok: 'The credential type created', errors: [409] },
      },
      schema: { summary: 'Define a credential type', body: typeBody, response: { 201: typeView, 400: errorResponse, 409: errorResponse } },
      handler: async (request, reply) => reply.code(201).send(typeOf(await service.createType(tenantOf(request).id, actorOf(request), request.body))),
    });

    r.delete('/credential_types/:typeId', {
      config: {
        permission: 'credentials:issue',
        access: 'platform',
        operation: { operationId: 'deleteCredentialType', ok: 'Removed; credentials already issued stay valid' },
      },
      schema: {
        summary: 'Remove a credential type (issued credentials stay valid)',
        params: typeParams,
        response: { 204: z.undefined(), 400: errorResponse, 404: errorResponse },
      },
      handler: async (request, reply) => {
        await service.deleteType(tenantOf(request).id, actorOf(request), request.params.typeId);
        return reply.code(204).send();
      },
    });

    r.post('/organizations/:orgId/credentials/offers', {
      config: {
        permission: 'credentials:issue',
        access: 'organization',
        operation: { operationId: 'createCredentialOffer', ok: 'The offer, by value and by reference; `tx_code` appears only in this response' },
      },
      schema: {
        summary: 'Make a credential offer (pre-authorized code flow)',
        params: orgParams,
        body: offerBody,
        response: { 201: offerView, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request, reply) => {
        const tenant = tenantOf(request);
        const made = await service.createOffer(
          { id: tenant.id, issuer: tenant.issuer, name: tenant.host },
          actorOf(request),
          request.params.orgId,
          request.body,
        );
        return reply
          .code(201)
          .header('cache-control', 'no-store')
          .send({
            offer_id: made.offer.id,
            credential_offer_uri: made.credentialOfferUri,
            credential_offer_link: `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(made.credentialOfferUri)}`,
            credential_offer: made.credentialOffer,
            tx_code: made.txCode,
            expires_in: service.settings.offerTtlSeconds,
          });
      },
    });

    r.get('/organizations/:orgId/credentials', {
      config: {
        permission: 'credentials:read',
        access: 'organization',
        operation: { operationId: 'listCredentials', ok: "A page of the organization's issued credentials (never their disclosures)" },
      },
      schema: {
        summary: 'List issued credentials (records only, never their disclosures)',
        params: orgParams,
        querystring: credentialList.query,
        response: { 200: pageResponse(credentialView), 404: errorResponse },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.list(tenantOf(request).id, request.params.orgId, after, limit + 1);
        return credentialList.page(rows.map(credentialOf), limit, (c) => c.id);
      },
    });

    r.get('/organizations/:orgId/credentials/:vcId', {
      config: {
        permission: 'credentials:read',
        access: 'organization',
        operation: { operationId: 'getCredential', ok: 'The credential record (never its disclosures)' },
      },
      schema: { summary: 'Get an issued credential record', params: vcParams, response: { 200: credentialView, 404: errorResponse } },
      handler: async (request) => credentialOf(await service.get(tenantOf(request).id, request.params.orgId, request.params.vcId)),
    });

    r.post('/organizations/:orgId/credentials/:vcId/revoke', {
      config: {
        permission: 'credentials:revoke',
        access: 'organization',
        operation: { operationId: 'revokeCredential', ok: 'Revoked: its status-list bit is set (idempotent)' },
      },
      schema: {
        summary: 'Revoke a credential (flips its status-list bit; idempotent)',
        params: vcParams,
        response: { 200: credentialView, 404: errorResponse },
      },
      handler: async (request) => credentialOf(await service.revoke(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.vcId)),
    });
  },
});
