// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** The events tenants/ records, for the event catalogue (events/catalogue.ts). */
export const tenantsCatalogue = {
  events: {
    // Tenant-wide: an operator changed the tenant's host or issuer (`keyhall tenant update`).
    // A deleted tenant's feed goes with it, so `tenant.deleted` is written to the process log only.
    'tenant.updated': { webhook: false, description: "the tenant's host or issuer was changed (keyhall tenant update)" },
    'signing_key.rotated': { webhook: false, description: "a new signing key became active (the algorithm's previous key was retired)" },
  },
} as const;
