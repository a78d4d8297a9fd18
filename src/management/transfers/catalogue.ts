// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the transfers feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const transfersCatalogue = {
  permissions: ['imports:write', 'exports:read'],
  events: {
    // Imports and exports (docs/import-export.md); tenant-wide.
    'import.completed': { webhook: false, description: 'a user import finished (its counts; the rejected rows are in its report)' },
    'import.failed': { webhook: false, description: 'a user import stopped (unreadable file, or interrupted by a restart)' },
    'export.completed': { webhook: false, description: "a tenant export was written (with include_secrets: users' password hashes included)" },
  },
} as const;
