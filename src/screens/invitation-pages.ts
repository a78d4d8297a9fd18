/** The hosted pages of an invitation link (docs/invitations.md): accept, sign in first, create the account, switch accounts, done. */
import { type Html, html } from './html.js';
import { hidden, layout, type PageFrame } from './pages.js';

const alert = (message: string | undefined) => (message ? html`<p class="error" role="alert" id="message">${message}</p>` : '');

interface Invited {
  organization: string;
  email: string;
}

const intro = (f: PageFrame, v: Invited) =>
  html`<h1>${f.t('invite.heading', { organization: v.organization })}</h1><p id="invited">${f.t('invite.intro', { organization: v.organization, email: v.email })}</p>`;

/** Signed in with the invited address: one button (a mail scanner's GET uses nothing). */
export function invitationAcceptPage(f: PageFrame, v: Invited & { csrf: string; token: string }): Html {
  return layout(
    f,
    html`${intro(f, v)}
<form method="post" action="/invitations/accept">${hidden('csrf_token', v.csrf)}${hidden('token', v.token)}<button type="submit" id="accept">${f.t('invite.accept')}</button></form>`,
  );
}

/** Not signed in, and an account has the address: sign in (back here afterwards). */
export function invitationSignInPage(f: PageFrame, v: Invited & { loginHref: string }): Html {
  return layout(f, html`${intro(f, v)}<p>${f.t('invite.sign_in_intro')}</p><p><a href="${v.loginHref}" id="sign-in">${f.t('invite.sign_in')}</a></p>`);
}

/** No account has the address: the invitation creates one. */
export function invitationCreatePage(f: PageFrame, v: Invited & { csrf: string; token: string; message?: string }): Html {
  return layout(
    f,
    html`${intro(f, v)}${alert(v.message)}<p>${f.t('invite.create_intro')}</p>
<form method="post" action="/invitations/accept/new">${hidden('csrf_token', v.csrf)}${hidden('token', v.token)}
<input type="email" name="username" autocomplete="username" value="${v.email}" hidden>
<label for="password">${f.t('invite.password')}</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="8" maxlength="256" required>
<label for="password_repeat">${f.t('invite.repeat')}</label><input id="password_repeat" name="password_repeat" type="password" autocomplete="new-password" minlength="8" maxlength="256" required>
<button type="submit" id="create">${f.t('invite.create')}</button></form>`,
  );
}

/** Signed in as another address: sign out, then this link again. */
export function invitationSwitchPage(f: PageFrame, v: Invited & { csrf: string; token: string; current: string }): Html {
  return layout(
    f,
    html`${intro(f, v)}<p class="error" id="other-account">${f.t('invite.other_account', { current: v.current, email: v.email })}</p>
<form method="post" action="/invitations/accept/switch">${hidden('csrf_token', v.csrf)}${hidden('token', v.token)}<button type="submit" id="switch">${f.t('invite.switch')}</button></form>`,
  );
}

export function invitationDonePage(f: PageFrame, v: { organization: string }): Html {
  return layout(
    f,
    html`<h1>${f.t('invite.heading', { organization: v.organization })}</h1><p id="joined">${f.t('invite.done', { organization: v.organization })}</p><p><a href="/">${f.t('invite.continue')}</a></p>`,
  );
}
