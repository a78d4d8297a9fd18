/** The /account pages (docs/account.md): the signed-in user's email, sessions, linked accounts, applications and SSO. */
import type { SessionRecord } from '../oauth/authorize/types.js';
import { deviceOf, signInMethodOf } from '../users/sign-in-methods.js';
import { type Html, html } from './html.js';
import { isMessageKey } from './i18n/index.js';
import { hidden, layout, type PageFrame, type SessionsView, ssoSection, when } from './pages.js';

/** The notices /account shows after a change (its `done` query parameter). */
export const ACCOUNT_NOTICES = ['email_sent', 'email_changed', 'session_ended', 'linked', 'unlinked'] as const;
export type AccountNotice = (typeof ACCOUNT_NOTICES)[number];

export interface AccountView extends SessionsView {
  emailVerified: boolean;
  /** The user's social identities, with their connection's name. */
  identities: Array<{ id: string; connectionName: string; email: string | null; linkedAt: number }>;
  /** The social connections the user may link (enabled for sign-in, not linked yet). */
  offered: Array<{ id: string; name: string }>;
  /** Names of the tenant's social connections, for the sessions' sign-in method. */
  connectionNames: ReadonlyMap<string, string>;
  notice?: { kind: AccountNotice; email?: string };
}

function methodText(f: PageFrame, s: SessionRecord, names: ReadonlyMap<string, string>): string {
  const method = signInMethodOf(s);
  const key = `method.${method}`;
  if (!isMessageKey(key)) return method;
  return f.t(key, { name: s.idp ? (names.get(s.idp) ?? s.idp) : '' });
}

export function accountPage(f: PageFrame, v: AccountView): Html {
  const post = (action: string, fields: Html | string, label: string, id?: string) =>
    html`<form method="post" action="${action}" class="inline"${id ? html` id="${id}"` : ''}>${hidden('csrf_token', v.csrf)}${fields}<button type="submit" class="secondary">${label}</button></form>`;
  const notice = v.notice ? html`<p id="notice" data-notice="${v.notice.kind}">${f.t(`account.${v.notice.kind}`, { email: v.notice.email ?? '' })}</p>` : '';
  return layout(
    f,
    html`<h1>${f.t('account.heading')}</h1>
${notice}
<section id="email"><h2>${f.t('account.email_heading')}</h2>
<p>${f.t.html('account.email_current', { email: html`<strong id="current-email">${v.email}</strong>` })} ${f.t(v.emailVerified ? 'account.email_verified' : 'account.email_unverified')}</p>
<form method="post" action="/account/email">${hidden('csrf_token', v.csrf)}
<label for="new_email">${f.t('account.email_new')}</label>
<input type="email" id="new_email" name="email" required maxlength="254" autocomplete="email">
<button type="submit">${f.t('account.email_change')}</button></form></section>
<section id="sessions"><h2>${f.t('account.sessions_heading')}</h2>
<table><thead><tr><th>${f.t('sessions.device')}</th><th>${f.t('account.ip')}</th><th>${f.t('account.started')}</th><th>${f.t('account.last_active')}</th><th>${f.t('account.method')}</th><th></th></tr></thead><tbody>
${v.sessions.map(
  (s) =>
    html`<tr data-session="${s.id}"${s.id === v.currentId ? html` data-current="true"` : ''}><td>${deviceOf(s.userAgent) ?? f.t('sessions.unknown_device')}${s.id === v.currentId ? ` ${f.t('sessions.this_device')}` : ''}</td><td>${s.ip ?? ''}</td><td>${when(s.createdAt)}</td><td>${when(s.lastSeenAt)}</td><td data-method="${signInMethodOf(s)}">${methodText(f, s, v.connectionNames)}</td><td>${post('/account/sessions/revoke', hidden('session_id', s.id), f.t('account.end_session'))}</td></tr>`,
)}
</tbody></table>
${post('/account/sessions/revoke', hidden('session_id', 'all'), f.t('sessions.sign_out_everywhere'))}</section>
<section id="identities"><h2>${f.t('account.identities_heading')}</h2>
${v.identities.length === 0 ? html`<p>${f.t('account.identities_none')}</p>` : ''}
<table><tbody>${v.identities.map(
      (i) =>
        html`<tr data-identity="${i.id}"><td>${i.connectionName}</td><td>${i.email ?? ''}</td><td>${f.t('account.linked_at')} ${when(i.linkedAt)}</td><td>${post('/account/identities/unlink', hidden('identity_id', i.id), f.t('account.unlink'))}</td></tr>`,
    )}</tbody></table>
${
  v.offered.length === 0
    ? ''
    : html`<p>${f.t('account.link_offer')}</p><ul class="social">${v.offered.map(
        (c) =>
          html`<li data-connection="${c.id}">${post('/account/identities/link', hidden('connection_id', c.id), f.t('account.link', { name: c.name }))}</li>`,
      )}</ul>`
}</section>
<section id="applications"><h2>${f.t('sessions.applications')}</h2>
${v.consents.length === 0 ? html`<p>${f.t('sessions.none')}</p>` : ''}
<table><tbody>${v.consents.map(
      (c) =>
        html`<tr><td>${c.clientName ?? c.clientId}</td><td>${[...c.scopes, ...c.resources].join(' ')}</td><td>${post('/sessions/consents/revoke', hidden('client_id', c.clientId), f.t('sessions.revoke'))}</td></tr>`,
    )}</tbody></table></section>
${ssoSection(f, v)}
<form method="post" action="/logout">${hidden('csrf_token', v.csrf)}<button type="submit">${f.t('sessions.sign_out')}</button></form>`,
  );
}

/** The page of an address-change link: it names the new address; only its POST changes it. */
export function emailChangePage(f: PageFrame, v: { csrf: string; token: string; email: string }): Html {
  return layout(
    f,
    html`<h1>${f.t('account.email_change_heading')}</h1>
<p>${f.t.html('account.email_change_confirm', { email: html`<strong>${v.email}</strong>` })}</p>
<form method="post" action="/account/email/verify">${hidden('csrf_token', v.csrf)}${hidden('token', v.token)}<button type="submit">${f.t('account.email_change_button')}</button></form>`,
  );
}
