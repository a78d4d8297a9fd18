// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the sso feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const ssoCatalogue = {
  permissions: ['sso:read', 'sso:write'],
  events: {
    'sso.connection.created': { webhook: false, description: 'an SSO connection was created' },
    'sso.connection.updated': { webhook: false, description: 'an SSO connection was changed (never its secret, only that it changed)' },
    'sso.connection.deleted': { webhook: false, description: 'an SSO connection was deleted (the users it created stay)' },
    'sso.login.succeeded': { webhook: false, description: 'a user signed in through an SSO connection (a new session)' },
    'sso.login.failed': { webhook: false, description: 'an SSO sign-in was refused (reason code and connection; never the assertion or token)' },
    'sso.identity.linked': { webhook: false, description: 'a signed-in user linked an upstream identity of an SSO connection to their own account' },
    'sso.identity.unlinked': { webhook: false, description: 'a user unlinked their upstream identities of an SSO connection' },
  },
} as const;
