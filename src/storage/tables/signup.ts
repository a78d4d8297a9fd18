/** Tables of self sign-up and passwordless sign-in by email (issue 29 points 4 and 6, docs/signup.md). */
export interface SigninPoliciesTable {
  tenant_id: string;
  /** off | open | domains */
  signup: string;
  /** JSON array of lower-case domains (the `domains` mode). */
  signup_domains: string;
  /** JSON array of email_code | magic_link. */
  passwordless: string;
  /** 0/1: a user's email must be verified before a sign-in completes. */
  require_verified_email: number;
  updated_at: number;
}

export interface EmailChallengesTable {
  /** ech_… (not a secret: it names the challenge a typed code is checked against). */
  id: string;
  tenant_id: string;
  /** signup | signin */
  purpose: string;
  /** The normalized address the message went to. */
  email: string;
  /** The user a passwordless sign-in is for; null for a pending sign-up. */
  user_id: string | null;
  /** A pending sign-up's chosen password (argon2id), until the account is created. */
  password_hash: string | null;
  /** SHA-256 hex of `{id}:{code}`. */
  code_hash: string;
  /** SHA-256 hex of the link token, or null (no link sent). */
  link_hash: string | null;
  /** SHA-256 hex of the asking browser's binding. */
  browser_hash: string;
  /** The flow handle and return_to, AES-256-GCM under a key derived from the browser's binding. */
  sealed_context: string | null;
  failed_attempts: number;
  created_at: number;
  code_expires_at: number;
  link_expires_at: number;
  consumed_at: number | null;
}

export interface SignupTables {
  signin_policies: SigninPoliciesTable;
  email_challenges: EmailChallengesTable;
}
