/**
 * The email templates: one per message type, HTML and text, in the recipient's language (the
 * hosted pages' catalogue, src/screens/i18n, with the tenant's own texts: a tenant overrides a
 * subject or a line through /v1/branding/texts like any page text) and the tenant's brand.
 */
import type { Brand } from '../screens/brand.js';
import { html } from '../screens/html.js';
import type { MessageKey, Translator } from '../screens/i18n/index.js';

export type EmailTemplate = 'verify_email' | 'password_reset' | 'invitation' | 'signup_verify' | 'signin_email' | 'email_change' | 'email_changed';

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

interface Parts {
  subject: MessageKey;
  body: MessageKey;
  button: MessageKey;
  /** The line that carries the code, when the message has one. */
  code: MessageKey;
  /** The body of a message without a link (a sign-in code only). */
  codeOnly?: MessageKey;
}

const PARTS: Record<EmailTemplate, Parts> = {
  verify_email: { subject: 'email.verify_subject', body: 'email.verify_body', button: 'email.verify_button', code: 'email.verify_code' },
  password_reset: { subject: 'email.reset_subject', body: 'email.reset_body', button: 'email.reset_button', code: 'email.verify_code' },
  invitation: { subject: 'email.invite_subject', body: 'email.invite_body', button: 'email.invite_button', code: 'email.verify_code' },
  signup_verify: { subject: 'email.signup_subject', body: 'email.signup_body', button: 'email.signup_button', code: 'email.verify_code' },
  signin_email: {
    subject: 'email.signin_subject',
    body: 'email.signin_body',
    button: 'email.signin_button',
    code: 'email.signin_code',
    codeOnly: 'email.signin_code_only',
  },
  // An address change (docs/account.md): the confirmation to the new address, the notice to the old one.
  email_change: { subject: 'email.change_subject', body: 'email.change_body', button: 'email.change_button', code: 'email.verify_code' },
  email_changed: { subject: 'email.changed_subject', body: 'email.changed_body', button: 'email.changed_button', code: 'email.verify_code' },
};

/** A message: its link and/or its code (for an invitation, the organization's name). Every value is escaped in the HTML. */
export function renderEmail(template: EmailTemplate, t: Translator, brand: Brand, v: { link?: string; code?: string; organization?: string }): RenderedEmail {
  const p = PARTS[template];
  const vars = { brand: brand.displayName, organization: v.organization ?? '' };
  const subject = t(p.subject, vars);
  const codeLine = v.code ? t(p.code, { code: v.code }) : undefined;
  const body = v.link || !p.codeOnly ? t(p.body, vars) : t(p.codeOnly, vars);
  const linkLines = v.link ? [v.link, ''] : [''];
  const text = [t('email.greeting'), '', body, ...linkLines, ...(codeLine ? [codeLine, ''] : []), t('email.ignore'), '', t('email.footer', vars)].join('\n');
  const page = html`<!doctype html>
<html lang="${t.locale}"><head><meta charset="utf-8"><title>${subject}</title></head>
<body style="font-family: system-ui, sans-serif; background: #f4f5f7; margin: 0; padding: 24px; color: #1d2330;">
<div style="max-width: 32rem; margin: 0 auto; background: #fff; border-top: 6px solid ${brand.primaryColor}; border-radius: 8px; padding: 24px;">
${brand.logoUrl ? html`<img src="${brand.logoUrl}" alt="" style="max-height: 48px; max-width: 200px; display: block; margin-bottom: 8px;">` : ''}
<p style="color: #5a6170;">${brand.displayName}</p>
<p>${t('email.greeting')}</p>
<p>${body}</p>
${
  v.link
    ? html`<p><a href="${v.link}" style="display: inline-block; background: ${brand.primaryColor}; color: #fff; padding: 10px 18px; border-radius: 4px; text-decoration: none;">${t(p.button)}</a></p>
<p style="word-break: break-all; font-size: 13px;">${v.link}</p>`
    : ''
}
${v.code ? html`<p>${t.html(p.code, { code: html`<strong style="font-size: 20px; letter-spacing: 2px;">${v.code}</strong>` })}</p>` : ''}
<p style="color: #5a6170; font-size: 13px;">${t('email.ignore')}</p>
<p style="color: #5a6170; font-size: 13px;">${t('email.footer', vars)}</p>
</div>
</body></html>`;
  return { subject, text, html: page.value };
}
