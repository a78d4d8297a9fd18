/** Tables of email delivery (issue 29, src/email/): the outbox, link tokens, the dev mailbox, the tenant's sender. */
export interface EmailOutboxTable {
  /** eml_… */
  id: string;
  tenant_id: string;
  user_id: string | null;
  recipient: string;
  /** verify_email | password_reset | … */
  template: string;
  /** The Message-ID header, fixed at enqueue: every attempt sends the same one. */
  message_id: string;
  /** JSON of the rendered message (headers, subject, text, html) until sent or failed; then null. */
  message: string | null;
  /** pending | sending | sent | failed */
  status: string;
  attempts: number;
  attempt_limit: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  /** smtp | dev_mailbox: how it was sent (null until then). */
  transport: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
}

export interface EmailTokensTable {
  /** etk_… */
  id: string;
  tenant_id: string;
  user_id: string;
  /** verify_email | password_reset (later: signup, invitation, passwordless, email_change). */
  purpose: string;
  /** link | code */
  kind: string;
  /** SHA-256 hex of the link token, or of the code bound to its row. */
  secret_hash: string;
  /** The address it was sent to: a token is good only while the user still has it. */
  email: string;
  /** Wrong codes typed against this row. */
  failed_attempts: number;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface EmailDevMailboxTable {
  id: string;
  tenant_id: string;
  outbox_id: string;
  recipient: string;
  template: string;
  message_id: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: number;
}

export interface EmailSettingsTable {
  tenant_id: string;
  from_address: string | null;
  from_name: string | null;
  reply_to: string | null;
  updated_at: number;
}

export interface EmailTables {
  email_outbox: EmailOutboxTable;
  email_tokens: EmailTokensTable;
  email_dev_mailbox: EmailDevMailboxTable;
  email_settings: EmailSettingsTable;
}
