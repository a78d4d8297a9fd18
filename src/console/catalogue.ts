// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** The events console/ records, for the event catalogue (events/catalogue.ts). */
export const consoleCatalogue = {
  events: {
    // Tenant-wide (organization_id null): the console's administrators (docs/console.md).
    'tenant_admin.granted': {
      webhook: false,
      description: 'a user was made a tenant administrator (console setup link, keyhall admin create, or another administrator in the console)',
    },
    'tenant_admin.revoked': {
      webhook: false,
      description: 'a user is no longer a tenant administrator (keyhall admin remove, or another administrator in the console)',
    },
  },
} as const;
