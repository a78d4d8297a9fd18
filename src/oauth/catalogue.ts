// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** The events oauth/ records, for the event catalogue (events/catalogue.ts). */
export const oauthCatalogue = {
  events: {
    'token.exchanged': { webhook: false, description: 'a token was exchanged (RFC 8693 delegation or impersonation)' },
    'refresh_token.reused': { webhook: false, description: 'a rotated refresh token was presented again; its family was revoked' },
    'token.revoked': { webhook: false, description: 'a token was revoked at /revoke' },
  },
} as const;
