import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf, principalOf } from '../principal.js';
import { domainVerificationView, organizationView } from './service.js';

const name = z.string().trim().min(1).max(200);
const slug = z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, 'must be lower-case letters, digits and dashes');
const domain = z
  .string()
  .max(253)
  .regex(/^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i, 'must be a domain name')
  .transform((d) => d.toLowerCase());
const httpsUrl = z
  .string()
  .max(2048)
  .url()
  .refine((u) => u.startsWith('https://'), 'must be an https URL');
const color = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be #rrggbb');

export const organizationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string().nullable(),
    domain: z.string().nullable(),
    did: z.string().nullable(),
    status: z.string(),
    brand_logo_url: z.string().nullable(),
    brand_primary_color: z.string().nullable(),
    brand_display_name: z.string().nullable(),
    webauthn_aaguid_allowlist: z.array(z.string()).nullable(),
    domain_verified: z.boolean(),
    sso_required: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Organization' });

const orgParams = z.strictObject({ orgId: idOf('org') });
const organizationList = listing('organizations');

export const organizationsFeature = defineFeature({
  tags: [{ name: 'organizations', description: 'Organizations (customers of the tenant): name, slug, domain and branding' }],
  routes: (r, { organizations: service }) => {
    r.post('/organizations', {
      config: {
        permission: 'organizations:write',
        access: 'platform',
        operation: { operationId: 'createOrganization', ok: 'The organization created', errors: [409] },
      },
      schema: {
        summary: 'Create an organization',
        body: z.strictObject({ name, slug: slug.optional(), domain: domain.optional() }),
        response: { 201: organizationSchema, 400: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => {
        const org = await service.create(tenantOf(request).id, actorOf(request), request.body);
        return reply.code(201).send(organizationView(org));
      },
    });

    r.get('/organizations', {
      config: {
        permission: 'organizations:read',
        access: 'platform',
        operation: { operationId: 'listOrganizations', ok: 'A page of organizations, oldest first' },
      },
      schema: { summary: 'List organizations', querystring: organizationList.query, response: { 200: pageResponse(organizationSchema) } },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.list(tenantOf(request).id, after, limit + 1);
        const p = organizationList.page(rows, limit, (o) => o.id);
        return { ...p, data: p.data.map(organizationView) };
      },
    });

    r.get('/organizations/:orgId', {
      config: { permission: 'organizations:read', access: 'organization', operation: { operationId: 'getOrganization', ok: 'The organization' } },
      schema: { summary: 'Get an organization', params: orgParams, response: { 200: organizationSchema, 404: errorResponse } },
      handler: async (request) => organizationView(await service.get(tenantOf(request).id, request.params.orgId)),
    });

    r.patch('/organizations/:orgId', {
      config: {
        permission: 'organizations:write',
        access: 'organization',
        operation: { operationId: 'updateOrganization', ok: 'The organization as updated', errors: [409] },
      },
      schema: {
        summary: 'Update an organization (name, slug, domain, branding)',
        params: orgParams,
        body: z.strictObject({
          name: name.optional(),
          slug: slug.nullable().optional(),
          domain: domain.nullable().optional(),
          brand_logo_url: httpsUrl.nullable().optional(),
          brand_primary_color: color.nullable().optional(),
          brand_display_name: z.string().trim().min(1).max(100).nullable().optional(),
          sso_required: z.boolean().optional(),
        }),
        response: { 200: organizationSchema, 400: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request) => {
        const b = request.body;
        const org = await service.update(tenantOf(request).id, actorOf(request), request.params.orgId, {
          name: b.name,
          slug: b.slug,
          domain: b.domain,
          brandLogoUrl: b.brand_logo_url,
          brandPrimaryColor: b.brand_primary_color?.toLowerCase() ?? b.brand_primary_color,
          brandDisplayName: b.brand_display_name,
          ssoRequired: b.sso_required,
        });
        return organizationView(org);
      },
    });

    const verificationSchema = z.object({
      domain: z.string().nullable(),
      verified: z.boolean(),
      verified_at: z.string().nullable(),
      dns: z.object({ name: z.string(), type: z.literal('TXT'), value: z.string() }).nullable(),
    });

    r.get('/organizations/:orgId/domain_verification', {
      config: {
        permission: 'organizations:read',
        access: 'organization',
        operation: { operationId: 'getDomainVerification', ok: "The organization's domain, whether it is verified, and the DNS TXT record that verifies it" },
      },
      schema: {
        summary: "The organization's domain and the DNS TXT record that verifies it",
        params: orgParams,
        response: { 200: verificationSchema, 404: errorResponse },
      },
      handler: async (request) => domainVerificationView(await service.get(tenantOf(request).id, request.params.orgId)),
    });

    r.post('/organizations/:orgId/domain_verification', {
      config: {
        permission: 'organizations:write',
        access: 'organization',
        operation: {
          operationId: 'verifyDomain',
          ok: 'The domain is verified (by its DNS TXT record, or manually by a platform key holding every permission: domains:verify)',
          errors: [409],
        },
      },
      schema: {
        summary: 'Verify the domain: by its DNS TXT record, or manually (needs domains:verify: platform keys holding every permission)',
        params: orgParams,
        body: z.strictObject({ method: z.enum(['dns', 'manual']) }),
        response: { 200: verificationSchema, 400: errorResponse, 403: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request) => {
        return domainVerificationView(
          await service.verifyDomain(tenantOf(request).id, actorOf(request), request.params.orgId, request.body.method, principalOf(request)),
        );
      },
    });

    r.delete('/organizations/:orgId', {
      config: {
        permission: 'organizations:write',
        access: 'platform',
        operation: { operationId: 'deleteOrganization', ok: 'Deleted; its memberships are removed and its API keys revoked' },
      },
      schema: { summary: 'Delete an organization, its memberships and API keys', params: orgParams, response: { 204: z.undefined(), 404: errorResponse } },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, actorOf(request), request.params.orgId);
        return reply.code(204).send();
      },
    });
  },
});
