/** The hosted pages. Every value is escaped by `html`; styles carry the response's CSP nonce. */
import type { SessionRecord } from '../oauth/authorize/types.js';
import type { LinkableConnection, SsoLinks } from '../sso/link.js';
import type { Brand } from './brand.js';
import { type Html, html } from './html.js';
import type { MessageKey, Translator } from './i18n/index.js';

export interface PageFrame {
  /** The page's title, in its language. */
  title: string;
  brand: Brand;
  nonce: string;
  /** The page's texts in its language (src/screens/i18n); `t.locale` is its `<html lang>`. */
  t: Translator;
}

export const SCOPE_TEXT: Record<string, MessageKey> = {
  openid: 'scope.openid',
  profile: 'scope.profile',
  email: 'scope.email',
  offline_access: 'scope.offline_access',
  // The /mcp tools' scopes (docs/mcp.md).
  'mcp:read': 'scope.mcp_read',
  'mcp:connected_accounts': 'scope.mcp_connected_accounts',
  'mcp:credentials': 'scope.mcp_credentials',
};

export function layout(f: PageFrame, body: Html): Html {
  return html`<!doctype html>
<html lang="${f.t.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${f.title} · ${f.brand.displayName}</title>
<style nonce="${f.nonce}">
:root { --brand: ${f.brand.primaryColor}; }
body { font-family: system-ui, sans-serif; background: #f4f5f7; margin: 0; color: #1d2330; }
main { max-width: 26rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
header { border-top: 6px solid var(--brand); margin: -2rem -2rem 1.5rem; border-radius: 8px 8px 0 0; padding: 1.25rem 2rem 0; }
header img { max-height: 48px; max-width: 200px; display: block; margin-bottom: .5rem; }
h1 { font-size: 1.35rem; margin: 0 0 1rem; }
label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
input[type=email], input[type=password], input[type=text] { width: 100%; box-sizing: border-box; padding: .6rem; border: 1px solid #c4c8d0; border-radius: 4px; font-size: 1rem; }
button { margin-top: 1.25rem; background: var(--brand); color: #fff; border: 0; border-radius: 4px; padding: .65rem 1.2rem; font-size: 1rem; cursor: pointer; }
button.secondary { background: #e3e6eb; color: #1d2330; }
ul.social { list-style: none; padding: 0; margin: 0; } a.button { display: block; margin-top: .6rem; border-radius: 4px; padding: .65rem 1.2rem; text-align: center; text-decoration: none; }
a.button.secondary { background: #e3e6eb; color: #1d2330; }
.error { background: #fdecec; color: #8a1111; padding: .6rem; border-radius: 4px; }
table { width: 100%; border-collapse: collapse; font-size: .9rem; } td, th { text-align: left; padding: .35rem .25rem; border-bottom: 1px solid #eee; }
.brand-name { color: #5a6170; font-size: .95rem; }
.qr svg { width: 220px; height: 220px; display: block; margin: 1rem auto; }
code, .codes { font-family: ui-monospace, monospace; word-break: break-all; }
.codes { columns: 2; list-style: none; padding: 0; font-size: 1.05rem; }
.or { text-align: center; color: #5a6170; margin: 1rem 0 0; }
form.inline { display: inline; } form.inline button { margin-top: .4rem; padding: .35rem .7rem; font-size: .85rem; }
</style>
</head>
<body>
<main>
<header>${f.brand.logoUrl ? html`<img src="${f.brand.logoUrl}" alt="">` : ''}<div class="brand-name">${f.brand.displayName}</div></header>
${body}
</main>
</body>
</html>`;
}

export const hidden = (name: string, value: string | null | undefined) => (value ? html`<input type="hidden" name="${name}" value="${value}">` : '');

/** The error codes a page explains in words of its own when the catalogue does not know the description. */
const ERROR_TEXT: Record<string, MessageKey> = {
  invalid_request: 'error.invalid_request',
  not_found: 'error.not_found',
  forbidden: 'error.forbidden',
  conflict: 'error.conflict',
  access_denied: 'error.access_denied',
  csrf_failed: 'error.csrf_failed',
  server_error: 'error.server_error',
};

/** The description is the error's English (from any layer): shown as the catalogue's message in the page's language. */
export function errorPage(f: PageFrame, error: string, description: string | undefined): Html {
  const text =
    description === undefined
      ? f.t('error.generic')
      : f.t.known(description, (Object.hasOwn(ERROR_TEXT, error) ? ERROR_TEXT[error] : undefined) ?? 'error.generic');
  return layout(f, html`<h1>${f.t('error.heading')}</h1><p class="error" id="error" data-error="${error}">${text}</p><p>${f.t('error.return')}</p>`);
}

/** The status line of the passkey buttons: /webauthn.js shows its messages there, in the page's language. */
export const webauthnStatus = (f: PageFrame) =>
  html`<p class="error" id="webauthn-status" aria-live="polite" data-unsupported="${f.t('script.unsupported')}" data-incomplete="${f.t('script.incomplete')}" hidden></p>`;

export interface LoginView {
  csrf: string;
  flow?: string;
  returnTo?: string;
  email?: string;
  message?: string;
  clientName?: string | null;
  /** Some organization of the tenant signs in with SSO: say that its people leave the password empty. */
  ssoHint?: boolean;
  /** The tenant's social connections: a plain link each (no form, so the CSP's form-action is unchanged). */
  social?: Array<{ id: string; name: string }>;
  /** Self sign-up is open: a "Create account" link (docs/signup.md). */
  signup?: boolean;
  /** Passwordless sign-in by email is on: the "email me a code" form. */
  passwordless?: boolean;
  /** A verification email went to this address: a link to its code page. */
  verifyEmail?: string;
}

/** A page of the sign-in (sign-up, "email me a code") keeping its context. */
const withContext = (path: string, v: Pick<LoginView, 'flow' | 'returnTo'>) =>
  v.flow ? `${path}?flow=${encodeURIComponent(v.flow)}` : v.returnTo ? `${path}?return_to=${encodeURIComponent(v.returnTo)}` : path;

/** Sign-up and passwordless sign-in by email, when the tenant's sign-in policy offers them. */
function emailOptions(f: PageFrame, v: LoginView): Html | string {
  return html`${
    v.verifyEmail
      ? html`<p><a href="/verify-email/code?email=${encodeURIComponent(v.verifyEmail)}" id="verify-email-code">${f.t('login.verify_link')}</a></p>`
      : ''
  }${
    v.passwordless
      ? html`<p class="or">${f.t('login.email_me_intro')}</p>
<form method="post" action="/login/email">
${hidden('csrf_token', v.csrf)}${hidden('flow', v.flow)}${hidden('return_to', v.returnTo)}
<label for="passwordless-email">${f.t('login.email')}</label>
<input id="passwordless-email" name="email" type="email" autocomplete="username" required>
<button type="submit" class="secondary" id="email-code">${f.t('login.email_me')}</button>
</form>`
      : ''
  }${v.signup ? html`<p><a href="${withContext('/signup', v)}" id="create-account">${f.t('login.create_account')}</a></p>` : ''}`;
}

/** A social connection's start link, carrying the sign-in's context. */
function socialStart(id: string, v: Pick<LoginView, 'flow' | 'returnTo'>): string {
  const q = new URLSearchParams({ ...(v.flow ? { flow: v.flow } : {}), ...(v.returnTo ? { return_to: v.returnTo } : {}) }).toString();
  return `/social/${encodeURIComponent(id)}/start${q ? `?${q}` : ''}`;
}

function socialButtons(f: PageFrame, v: LoginView): Html | string {
  if (!v.social || v.social.length === 0) return '';
  return html`<p class="or">${f.t('login.or')}</p>
<ul class="social" id="social-buttons">${v.social.map((c) => html`<li><a class="button secondary" id="social-${c.id}" href="${socialStart(c.id, v)}">${f.t('login.social', { name: c.name })}</a></li>`)}</ul>`;
}

/** "Forgot password?" keeps the sign-in it came from, to return to it. */
const forgotHref = (v: LoginView) =>
  v.flow ? `/login/forgot?flow=${encodeURIComponent(v.flow)}` : v.returnTo ? `/login/forgot?return_to=${encodeURIComponent(v.returnTo)}` : '/login/forgot';

export function loginPage(f: PageFrame, v: LoginView): Html {
  return layout(
    f,
    html`<h1>${v.clientName ? f.t('login.heading_client', { client: v.clientName }) : f.t('login.heading')}</h1>
${v.message ? html`<p class="error" role="alert">${v.message}</p>` : ''}
<form method="post" action="/login">
${hidden('csrf_token', v.csrf)}${hidden('flow', v.flow)}${hidden('return_to', v.returnTo)}
<label for="email">${f.t('login.email')}</label>
<input id="email" name="email" type="email" autocomplete="username webauthn" required value="${v.email ?? ''}">
<label for="password">${f.t('login.password')}</label>
<input id="password" name="password" type="password" autocomplete="current-password">
${v.ssoHint ? html`<p class="hint">${f.t('login.sso_hint')}</p>` : ''}
<button type="submit">${f.t('login.submit')}</button>
</form>
<p><a href="${forgotHref(v)}" id="forgot-password">${f.t('login.forgot')}</a></p>
<p class="or">${f.t('login.or')}</p>
<form method="post" action="/login/passkey" id="passkey-form" data-conditional="/login/passkey/options">
${hidden('csrf_token', v.csrf)}${hidden('flow', v.flow)}${hidden('return_to', v.returnTo)}<input type="hidden" name="credential" value="">
<button type="button" class="secondary" id="passkey-login" data-webauthn="get" data-options="/login/passkey/options" data-form="passkey-form">${f.t('login.passkey')}</button>
</form>
${webauthnStatus(f)}
${socialButtons(f, v)}
${emailOptions(f, v)}
<script src="/webauthn.js" defer></script>`,
  );
}

export function consentPage(f: PageFrame, v: { csrf: string; flow: string; clientName: string; scopes: string[]; resources: string[] }): Html {
  return layout(
    f,
    html`<h1>${f.t('consent.heading', { client: v.clientName })}</h1>
${v.scopes.length === 0 ? html`<p>${f.t('consent.signed_in_only')}</p>` : ''}<ul>${v.scopes.map((s) => html`<li>${Object.hasOwn(SCOPE_TEXT, s) ? f.t(SCOPE_TEXT[s]!) : s}</li>`)}</ul>
${v.resources.length > 0 ? html`<p>${f.t('consent.resources')}</p><ul>${v.resources.map((r) => html`<li>${r}</li>`)}</ul>` : ''}
<form method="post" action="/login/consent">
${hidden('csrf_token', v.csrf)}${hidden('flow', v.flow)}
<button type="submit" name="decision" value="allow">${f.t('consent.allow')}</button>
<button type="submit" name="decision" value="deny" class="secondary">${f.t('consent.deny')}</button>
</form>`,
  );
}

export interface LogoutView {
  csrf: string;
  clientName?: string | null;
  idTokenHint?: string;
  postLogoutRedirectUri?: string;
  state?: string;
  clientId?: string;
}

export function logoutPage(f: PageFrame, v: LogoutView): Html {
  return layout(
    f,
    html`<h1>${v.clientName ? f.t('logout.heading_client', { client: v.clientName }) : f.t('logout.heading')}</h1>
<form method="post" action="/logout">
${hidden('csrf_token', v.csrf)}${hidden('id_token_hint', v.idTokenHint)}${hidden('post_logout_redirect_uri', v.postLogoutRedirectUri)}${hidden('state', v.state)}${hidden('client_id', v.clientId)}
<button type="submit">${f.t('logout.submit')}</button>
</form>`,
  );
}

export function signedOutPage(f: PageFrame): Html {
  return layout(f, html`<h1>${f.t('signed_out.heading')}</h1><p><a href="/login">${f.t('signed_out.again')}</a></p>`);
}

export interface SessionsView {
  csrf: string;
  email: string;
  currentId: string;
  sessions: SessionRecord[];
  consents: Array<{ clientId: string; clientName: string | null; scopes: string[]; resources: string[] }>;
  /** Single sign-on: the connections the account signs in through, and those it may link. */
  sso: SsoLinks;
}

export const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

export function sessionsPage(f: PageFrame, v: SessionsView): Html {
  const revoke = (id: string, label: string) =>
    html`<form method="post" action="/sessions/revoke">${hidden('csrf_token', v.csrf)}${hidden('session_id', id)}<button type="submit" class="secondary">${label}</button></form>`;
  return layout(
    f,
    html`<h1>${f.t('sessions.heading')}</h1>
<p>${f.t.html('sessions.signed_in_as', { email: html`<strong>${v.email}</strong>` })}</p>
<table><thead><tr><th>${f.t('sessions.device')}</th><th>${f.t('sessions.created')}</th><th>${f.t('sessions.last_seen')}</th><th></th></tr></thead><tbody>
${v.sessions.map(
  (s) =>
    html`<tr data-session="${s.id}"><td>${s.userAgent ?? f.t('sessions.unknown_device')}${s.id === v.currentId ? ` ${f.t('sessions.this_device')}` : ''}</td><td>${when(s.createdAt)}</td><td>${when(s.lastSeenAt)}</td><td>${revoke(s.id, f.t('sessions.revoke'))}</td></tr>`,
)}
</tbody></table>
${revoke('all', f.t('sessions.sign_out_everywhere'))}
<h1>${f.t('sessions.applications')}</h1>
${v.consents.length === 0 ? html`<p>${f.t('sessions.none')}</p>` : ''}
<table><tbody>${v.consents.map(
      (c) =>
        html`<tr><td>${c.clientName ?? c.clientId}</td><td>${[...c.scopes, ...c.resources].join(' ')}</td><td><form method="post" action="/sessions/consents/revoke">${hidden('csrf_token', v.csrf)}${hidden('client_id', c.clientId)}<button type="submit" class="secondary">${f.t('sessions.revoke')}</button></form></td></tr>`,
    )}</tbody></table>
${ssoSection(f, v)}
<form method="post" action="/logout">${hidden('csrf_token', v.csrf)}<button type="submit">${f.t('sessions.sign_out')}</button></form>`,
  );
}

/** /sessions and /account: linked SSO connections (Unlink each) and the ones the user may link (Link each: a round trip to the IdP). */
export function ssoSection(f: PageFrame, v: Pick<SessionsView, 'csrf' | 'sso'>): Html | string {
  if (v.sso.linked.length === 0 && v.sso.offered.length === 0) return '';
  const row = (c: LinkableConnection, action: string, label: string) =>
    html`<tr data-connection="${c.connectionId}"><td>${c.connectionName}</td><td>${c.organizationName}</td><td><form method="post" action="${action}">${hidden('csrf_token', v.csrf)}${hidden('connection_id', c.connectionId)}<button type="submit" class="secondary">${label}</button></form></td></tr>`;
  return html`<h1>${f.t('sessions.sso_heading')}</h1>
${v.sso.linked.length === 0 ? html`<p>${f.t('sessions.sso_none')}</p>` : html`<table id="sso-linked"><tbody>${v.sso.linked.map((c) => row(c, '/sso/identities/unlink', f.t('sessions.sso_unlink')))}</tbody></table>`}
${v.sso.offered.length === 0 ? '' : html`<p>${f.t('sessions.sso_offer')}</p><table id="sso-offered"><tbody>${v.sso.offered.map((c) => row(c, `/sso/${encodeURIComponent(c.connectionId)}/link`, f.t('sessions.sso_link')))}</tbody></table>`}`;
}

export interface ConnectListView {
  csrf: string;
  email: string;
  connected?: string;
  accounts: Array<{ id: string; providerName: string; organizationName: string; status: string; scopes: string[] }>;
  providers: Array<{ id: string; name: string }>;
}

/** /connect: the user's connected accounts (with a Disconnect button each) and the providers to connect. */
export function connectListPage(f: PageFrame, v: ConnectListView): Html {
  return layout(
    f,
    html`<h1>${f.t('connect.heading')}</h1>
<p>${f.t.html('sessions.signed_in_as', { email: html`<strong>${v.email}</strong>` })}</p>
${v.connected ? html`<p id="connected" data-account="${v.connected}">${f.t('connect.connected')}</p>` : ''}
${v.accounts.length === 0 ? html`<p>${f.t('connect.none')}</p>` : ''}
<table><tbody>${v.accounts.map(
      (a) =>
        html`<tr data-account="${a.id}" data-status="${a.status}"><td>${a.providerName}</td><td>${a.organizationName}</td><td>${a.status === 'active' ? a.scopes.join(' ') : f.t('connect.reconnect')}</td><td><form method="post" action="/connect/accounts/disconnect">${hidden('csrf_token', v.csrf)}${hidden('account_id', a.id)}<button type="submit" class="secondary">${f.t('connect.disconnect')}</button></form></td></tr>`,
    )}</tbody></table>
<h1>${f.t('connect.add_heading')}</h1>
${v.providers.length === 0 ? html`<p>${f.t('connect.no_providers')}</p>` : ''}
<ul>${v.providers.map((p) => html`<li><a href="/connect/${p.id}" data-provider="${p.id}">${p.name}</a></li>`)}</ul>`,
  );
}

/** /connect/{providerId}: choose the organization, see the scopes, continue to the provider. */
export function connectStartPage(
  f: PageFrame,
  v: { csrf: string; providerId: string; providerName: string; scopes: string[]; organizations: Array<{ id: string; name: string }> },
): Html {
  return layout(
    f,
    html`<h1>${f.t('connect.start_heading', { provider: v.providerName })}</h1>
${v.scopes.length > 0 ? html`<p>${f.t('connect.scopes', { provider: v.providerName })}</p><ul>${v.scopes.map((s) => html`<li>${s}</li>`)}</ul>` : ''}
<form method="post" action="/connect/${v.providerId}">
${hidden('csrf_token', v.csrf)}
<label for="organization_id">${f.t('connect.organization')}</label>
<select id="organization_id" name="organization_id" required>${v.organizations.map((o) => html`<option value="${o.id}">${o.name}</option>`)}</select>
<button type="submit">${f.t('connect.continue', { provider: v.providerName })}</button>
</form>`,
  );
}
