// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the email feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const emailCatalogue = {
  permissions: [],
  events: {
    // Email delivery (docs/email.md): identifiers only, never the body or its links.
    'email.sent': { webhook: false, description: 'an email was handed to the SMTP server or the dev mailbox (template, Message-ID; never the body)' },
    'email.failed': { webhook: false, description: 'an email could not be sent: refused by the SMTP server (5xx) or attempts used up' },
    'email_settings.updated': { webhook: false, description: "the tenant's email sender (from, reply-to) changed" },
  },
} as const;
