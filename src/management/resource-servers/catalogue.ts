// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the resource-servers feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const resourceServersCatalogue = {
  permissions: ['resource_servers:read', 'resource_servers:write'],
  events: {
    'resource_server.created': { webhook: false, description: 'a resource server (API) was registered' },
    'resource_server.updated': { webhook: false, description: "a resource server's settings changed" },
    'resource_server.deleted': { webhook: false, description: 'a resource server was removed' },
  },
} as const;
