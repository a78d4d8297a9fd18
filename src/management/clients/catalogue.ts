// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the clients feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const clientsCatalogue = {
  permissions: ['clients:read', 'clients:write', 'clients:register'],
  events: {
    // Tenant-wide (organization_id null): webhook endpoints belong to organizations, so it is
    // read from GET /v1/events only.
    'client.created': { webhook: false, description: 'an OAuth client was registered' },
    'client.updated': { webhook: false, description: "an OAuth client's metadata changed (the fields that changed are listed, never a secret)" },
    'client.deleted': { webhook: false, description: 'an OAuth client was removed' },
    'client.secret_rotated': { webhook: false, description: "an OAuth client's secret was replaced (the old one stopped working)" },
    'oauth_settings.updated': { webhook: false, description: "the tenant's token lifetimes or ID-token claims policy changed" },
  },
} as const;
