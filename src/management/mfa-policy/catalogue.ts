// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the mfa-policy feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const mfaPolicyCatalogue = {
  permissions: ['mfa_policy:read', 'mfa_policy:write'],
  events: {
    'mfa_policy.updated': { webhook: false, description: "the tenant's or an organization's MFA policy (off, optional, required) was set or cleared" },
  },
} as const;
