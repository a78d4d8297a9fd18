// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the members feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const membersCatalogue = {
  permissions: ['members:read', 'members:write'],
  events: {
    'member.added': { webhook: true, description: 'a user was added to an organization' },
    'member.removed': { webhook: true, description: 'a user was removed from an organization' },
    'member.role_changed': { webhook: true, description: "a member's roles changed (`role`: the first of `roles`)" },
  },
} as const;
