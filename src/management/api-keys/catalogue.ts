// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the api-keys feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const apiKeysCatalogue = {
  permissions: ['api_keys:read', 'api_keys:write'],
  events: {
    'api_key.created': { webhook: true, description: 'an API key was minted' },
    'api_key.revoked': { webhook: false, description: 'an API key was revoked' },
  },
} as const;
