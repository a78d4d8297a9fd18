// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the events feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const eventsCatalogue = {
  permissions: ['events:read'],
  events: {},
} as const;
