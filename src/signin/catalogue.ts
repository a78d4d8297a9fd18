// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** The events signin/ records, for the event catalogue (events/catalogue.ts). */
export const signinCatalogue = {
  events: {
    'login.succeeded': { webhook: false, description: 'a user signed in on a hosted login page (a new session)' },
    'login.failed': { webhook: false, description: 'a sign-in failed (unknown email or wrong password; same answer to the user)' },
    logout: { webhook: false, description: 'a user signed out (their session ended)' },
    'session.revoked': {
      webhook: false,
      description:
        'a session ended; `reason`: logout (RP-initiated or /logout), user (/sessions), admin (/v1), password_change, user_deleted, deprovisioned (SCIM). Its clients are sent back-channel logout tokens',
    },
    'consent.granted': { webhook: false, description: 'a user approved a third-party client' },
    'consent.revoked': { webhook: false, description: "a user withdrew a client's consent" },
    'login.passkey': { webhook: false, description: 'a user signed in with a passkey (a new session)' },
    'passkey.registered': { webhook: false, description: 'a user registered a passkey' },
    'passkey.removed': { webhook: false, description: 'a passkey was removed (by its user on /mfa, or through /v1)' },
    'passkey.rejected': {
      webhook: false,
      description: "a passkey registration was refused by an organization's WebAuthn policy, or because the FIDO MDS reports its model revoked or compromised",
    },
    'passkey.counter_regressed': {
      webhook: false,
      description: "a passkey's signature counter went backwards (a cloned authenticator?); the sign-in was refused and the passkey disabled",
    },
    'mfa.totp.enrolled': { webhook: false, description: 'a user set up an authenticator app (TOTP)' },
    'mfa.totp.removed': { webhook: false, description: 'a user removed their authenticator app (TOTP)' },
    'mfa.challenge.succeeded': { webhook: false, description: 'a second factor was given at sign-in' },
    'mfa.challenge.failed': { webhook: false, description: 'a wrong second factor was given at sign-in' },
    'mfa.recovery_code.used': { webhook: false, description: 'a recovery code was used (each works once)' },
    'mfa.recovery_codes.regenerated': { webhook: false, description: "a user's recovery codes were (re)generated; earlier ones stop working" },
  },
} as const;
