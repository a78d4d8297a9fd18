// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the organizations feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const organizationsCatalogue = {
  permissions: ['organizations:read', 'organizations:write', 'domains:verify'],
  events: {
    'organization.created': { webhook: false, description: 'an organization was created' },
    'organization.updated': { webhook: false, description: 'an organization was changed' },
    'organization.domain_verified': { webhook: false, description: "an organization's domain was verified (DNS TXT record or a platform key)" },
    'organization.deleted': { webhook: false, description: 'an organization was deleted' },
  },
} as const;
