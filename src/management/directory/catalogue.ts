// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the directory feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const directoryCatalogue = {
  permissions: ['directory:read', 'directory:write'],
  events: {
    'directory.connection.created': { webhook: false, description: 'a directory (SCIM) connection was created' },
    'directory.connection.updated': { webhook: false, description: "a directory connection's name, role mapping or rate limit changed" },
    'directory.connection.deleted': { webhook: false, description: 'a directory connection was deleted (its members stay)' },
    'directory.token.created': { webhook: false, description: "a SCIM token was minted (the connection's previous token is revoked)" },
    'directory.user.created': { webhook: false, description: 'a SCIM user was provisioned' },
    'directory.user.updated': { webhook: false, description: 'a SCIM user was changed' },
    'directory.user.deactivated': { webhook: false, description: 'a SCIM user was set active:false (membership removed)' },
    'directory.user.reactivated': { webhook: false, description: 'a SCIM user was set active:true again (membership restored)' },
    'directory.user.deleted': { webhook: false, description: 'a SCIM user was deleted (membership removed)' },
    'directory.group.created': { webhook: false, description: 'a SCIM group was created' },
    'directory.group.updated': { webhook: false, description: 'a SCIM group was renamed or its members changed' },
    'directory.group.deleted': { webhook: false, description: 'a SCIM group was deleted' },
  },
} as const;
