import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { LOCALES } from '../../screens/i18n/index.js';
import { errorResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';

/** A message as a tenant writes it: plain text (escaped on the page), `{placeholders}` of the English message only. */
export const MAX_TEXT_LENGTH = 1000;
const texts = z.record(z.string().max(20), z.record(z.string().max(100), z.string().min(1).max(MAX_TEXT_LENGTH)));
const localeSchema = z.object({ default_locale: z.enum(LOCALES), updated_at: z.string().nullable() });

/** The hosted pages' language per tenant: message overrides per locale and the default locale (docs/branding.md). */
export const brandingFeature = defineFeature({
  tags: [{ name: 'branding', description: "The hosted pages' language: the tenant's default locale and its own texts per locale" }],
  routes: (r, { branding: service }) => {
    r.get('/branding/texts', {
      config: {
        permission: 'branding:read',
        access: 'platform',
        operation: { operationId: 'getBrandingTexts', ok: 'The messages the tenant replaces, per locale ({} when none)' },
      },
      schema: { summary: "The tenant's own texts of the hosted pages, per locale (only the messages it replaces)", response: { 200: texts } },
      handler: async (request) => service.getTexts(tenantOf(request).id),
    });

    r.put('/branding/texts', {
      config: { permission: 'branding:write', access: 'platform', operation: { operationId: 'setBrandingTexts', ok: 'The texts as stored' } },
      schema: {
        summary: 'Replace the tenant\'s texts of the hosted pages: `{ "de": { "login.heading": "…" } }` (an empty object restores the catalogue\'s)',
        body: texts,
        response: { 200: texts, 400: errorResponse },
      },
      handler: async (request) => service.putTexts(tenantOf(request).id, actorOf(request), request.body),
    });

    r.get('/branding/locale', {
      config: {
        permission: 'branding:read',
        access: 'platform',
        operation: { operationId: 'getBrandingLocale', ok: "The hosted pages' default language (en when never set)" },
      },
      schema: {
        summary: "The hosted pages' default language (when neither ui_locales nor Accept-Language names a supported one)",
        response: { 200: localeSchema },
      },
      handler: async (request) => service.getLocale(tenantOf(request).id),
    });

    r.put('/branding/locale', {
      config: { permission: 'branding:write', access: 'platform', operation: { operationId: 'setBrandingLocale', ok: 'The default language as stored' } },
      schema: {
        summary: "Set the hosted pages' default language",
        body: z.strictObject({ default_locale: z.enum(LOCALES) }),
        response: { 200: localeSchema, 400: errorResponse },
      },
      handler: async (request) => service.putLocale(tenantOf(request).id, actorOf(request), request.body.default_locale),
    });
  },
});
