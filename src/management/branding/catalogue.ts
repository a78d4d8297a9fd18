// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the branding feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const brandingCatalogue = {
  permissions: ['branding:read', 'branding:write'],
  events: {
    // The hosted pages' language (docs/branding.md); tenant-wide.
    'branding.texts.updated': { webhook: false, description: "the tenant's own texts of the hosted pages were replaced (the number of messages per locale)" },
    'branding.locale.updated': { webhook: false, description: "the hosted pages' default language was set" },
  },
} as const;
