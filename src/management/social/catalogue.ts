// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the social feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const socialCatalogue = {
  permissions: ['social:read', 'social:write'],
  events: {
    'social_connection.created': { webhook: false, description: 'a social connection (Google, GitHub, any OIDC or OAuth 2.0 provider) was created' },
    'social_connection.updated': { webhook: false, description: 'a social connection was changed (never its secret, only that it changed)' },
    'social_connection.deleted': { webhook: false, description: 'a social connection was deleted (its linked identities with it; the users stay)' },
    'social_settings.updated': { webhook: false, description: "the tenant's account-linking setting changed" },
    'identity.linked': {
      webhook: false,
      description: 'an upstream identity of a social connection was linked to a user (first sign-in or automatic link by verified email)',
    },
    'identity.unlinked': { webhook: false, description: 'an upstream identity of a social connection was removed from a user' },
    'login.social': { webhook: false, description: 'a user signed in through a social connection (a new session)' },
    'login.social_failed': { webhook: false, description: 'a social sign-in was refused (reason code and connection; never a code or token)' },
  },
} as const;
