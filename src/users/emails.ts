/** Emails are unique per tenant in this form: trimmed and lower-cased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();
