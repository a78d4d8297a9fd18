// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the webauthn-policy feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const webauthnPolicyCatalogue = {
  permissions: ['webauthn_policy:read', 'webauthn_policy:write'],
  events: {
    'webauthn_policy.updated': { webhook: false, description: "an organization's passkey AAGUID allowlist was set or cleared" },
  },
} as const;
