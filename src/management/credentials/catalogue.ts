// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the credentials feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const credentialsCatalogue = {
  permissions: ['credentials:issue', 'credentials:read', 'credentials:revoke'],
  events: {
    'credential.issued': { webhook: true, description: 'a verifiable credential was issued' },
    'credential.revoked': { webhook: true, description: "a credential's status-list bit was flipped" },
    'credential.offer.created': { webhook: false, description: 'a credential offer (pre-authorized code) was made' },
    'credential.offer.expired': { webhook: false, description: 'a credential offer died unredeemed (expired, or too many wrong tx_codes)' },
    // Tenant-wide (organization_id null), like resource servers.
    'credential_type.created': { webhook: false, description: 'a credential type was defined' },
    'credential_type.deleted': { webhook: false, description: 'a credential type was removed' },
  },
} as const;
