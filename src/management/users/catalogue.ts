// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the users feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const usersCatalogue = {
  permissions: ['users:read', 'users:write'],
  events: {
    'user.created': { webhook: false, description: 'a user was created' },
    'user.updated': { webhook: false, description: 'a user was changed (password changes included, never the password)' },
    'user.deleted': { webhook: false, description: 'a user was deleted' },
    'user.email_verified': { webhook: false, description: 'a user confirmed their email address (an emailed link or code)' },
    'user.password_reset': {
      webhook: false,
      description: 'a user set a new password through an emailed reset link; every session and refresh token of theirs was revoked',
    },
    'user.password_rehashed': {
      webhook: false,
      description: "a user's imported password hash (bcrypt, scrypt, PBKDF2…) was replaced by argon2id at their sign-in (the format, never a hash)",
    },
  },
} as const;
