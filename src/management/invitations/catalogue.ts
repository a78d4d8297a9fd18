// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the invitations feature adds to the catalogues: no permission of its own (members:read and members:write) and its events (events/catalogue.ts). */
export const invitationsCatalogue = {
  permissions: [],
  events: {
    // Invitations (docs/invitations.md).
    'invitation.created': { webhook: false, description: 'an email address was invited into an organization (its link emailed)' },
    'invitation.resent': { webhook: false, description: "an invitation's link was sent again (the earlier link no longer works)" },
    'invitation.accepted': {
      webhook: false,
      description: 'an invitation was accepted on the hosted page (the member.added of the same transaction makes the membership)',
    },
    'invitation.revoked': { webhook: false, description: 'an invitation was revoked: its link no longer works' },
  },
} as const;
