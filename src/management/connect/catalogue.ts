// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the vault's upstream providers (connect/routes.ts) add to the catalogues: their API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const connectProvidersCatalogue = {
  permissions: ['connect_providers:read', 'connect_providers:write'],
  events: {
    // The connected-accounts vault (docs/connected-accounts.md). Provider events are tenant-wide.
    'connect.provider.created': { webhook: false, description: 'an upstream provider of the vault was registered' },
    'connect.provider.updated': { webhook: false, description: "an upstream provider's settings or client secret changed" },
    'connect.provider.deleted': { webhook: false, description: 'an upstream provider was removed' },
  },
} as const;

/** What the vault's connected accounts (connect/routes.ts) add to the catalogues: their API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const connectedAccountsCatalogue = {
  permissions: ['connected_accounts:read', 'connected_accounts:write', 'connected_accounts:token'],
  events: {
    'connected_account.connected': { webhook: false, description: 'a user connected an upstream account (or connected it again)' },
    'connected_account.disconnected': {
      webhook: false,
      description: 'a connected account was removed (by its user or an administrator, or because its user left the organization)',
    },
    'connected_account.token_retrieved': {
      webhook: false,
      description: 'an access token was retrieved from the vault (refreshed upstream first when near expiry)',
    },
    'connected_account.token_retrieval_failed': { webhook: false, description: 'a vault token retrieval failed (unknown account, upstream refresh failed)' },
    'connected_account.reauthorization_required': {
      webhook: false,
      description: 'the upstream refused the refresh token; the user must connect the account again',
    },
  },
} as const;
