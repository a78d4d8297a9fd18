// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the sign-in policy feature adds to the catalogues: no permission of its own (mfa_policy:read and mfa_policy:write, docs/signup.md) and its events (events/catalogue.ts). */
export const signinPolicyCatalogue = {
  permissions: [],
  events: {
    'signin_policy.updated': {
      webhook: false,
      description: "the tenant's sign-in policy (self sign-up, passwordless sign-in, verified email required) was set",
    },
  },
} as const;
