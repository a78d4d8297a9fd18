// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the roles feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const rolesCatalogue = {
  permissions: ['roles:read', 'roles:write'],
  events: {
    // Organizations' roles (docs/authorization.md): tenant-wide ones have organization_id null.
    'role.created': { webhook: false, description: "a role was defined (tenant-wide, or an organization's own)" },
    'role.updated': { webhook: false, description: "a role's name, description or permissions changed" },
    'role.deleted': { webhook: false, description: 'a role was deleted (its holders reassigned when ?reassign= named another)' },
    'role.settings_updated': { webhook: false, description: 'the default role for new members was set' },
    // Machine clients in an organization (docs/authorization.md).
    'client.organization_granted': { webhook: false, description: 'a client_credentials client was bound to an organization, or its roles there changed' },
    'client.organization_revoked': { webhook: false, description: "a client's binding to an organization was removed" },
  },
} as const;
