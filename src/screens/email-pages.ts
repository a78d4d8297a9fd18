/** The hosted pages of email links (docs/email.md): verification by link or code, "Forgot password?", a new password. */
import { type Html, html } from './html.js';
import { hidden, layout, type PageFrame } from './pages.js';

const alert = (message: string | undefined) => (message ? html`<p class="error" role="alert" id="message">${message}</p>` : '');

/** The page a verification link opens: one button, so a mail scanner's GET uses nothing. */
export function verifyLinkPage(f: PageFrame, v: { csrf: string; token: string }): Html {
  return layout(
    f,
    html`<h1>${f.t('verify.heading')}</h1><p>${f.t('verify.intro')}</p>
<form method="post" action="/verify-email">${hidden('csrf_token', v.csrf)}${hidden('token', v.token)}<button type="submit" id="confirm">${f.t('verify.confirm')}</button></form>`,
  );
}

export function verifyCodePage(f: PageFrame, v: { csrf: string; email?: string; message?: string }): Html {
  return layout(
    f,
    html`<h1>${f.t('verify.code_heading')}</h1>${alert(v.message)}<p>${f.t('verify.code_intro')}</p>
<form method="post" action="/verify-email/code">${hidden('csrf_token', v.csrf)}
<label for="email">${f.t('verify.email')}</label><input id="email" name="email" type="email" required value="${v.email ?? ''}">
<label for="code">${f.t('verify.code')}</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">${f.t('verify.confirm')}</button></form>`,
  );
}

export function verifiedPage(f: PageFrame): Html {
  return layout(f, html`<h1>${f.t('verify.heading')}</h1><p id="verified">${f.t('verify.done')}</p>`);
}

export function forgotPage(f: PageFrame, v: { csrf: string; message?: string; loginHref: string }): Html {
  return layout(
    f,
    html`<h1>${f.t('forgot.heading')}</h1>${alert(v.message)}<p>${f.t('forgot.intro')}</p>
<form method="post" action="/login/forgot">${hidden('csrf_token', v.csrf)}
<label for="email">${f.t('forgot.email')}</label><input id="email" name="email" type="email" autocomplete="username" required>
<button type="submit">${f.t('forgot.submit')}</button></form>
<p><a href="${v.loginHref}">${f.t('forgot.back')}</a></p>`,
  );
}

export function forgotSentPage(f: PageFrame, v: { loginHref: string }): Html {
  return layout(f, html`<h1>${f.t('forgot.heading')}</h1><p id="sent">${f.t('forgot.sent')}</p><p><a href="${v.loginHref}">${f.t('forgot.back')}</a></p>`);
}

export function resetPage(f: PageFrame, v: { csrf: string; token: string; message?: string }): Html {
  return layout(
    f,
    html`<h1>${f.t('reset.heading')}</h1>${alert(v.message)}
<form method="post" action="/reset-password">${hidden('csrf_token', v.csrf)}${hidden('token', v.token)}
<label for="password">${f.t('reset.password')}</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="8" maxlength="256" required>
<label for="password_repeat">${f.t('reset.repeat')}</label><input id="password_repeat" name="password_repeat" type="password" autocomplete="new-password" minlength="8" maxlength="256" required>
<button type="submit">${f.t('reset.submit')}</button></form>`,
  );
}

export function resetDonePage(f: PageFrame): Html {
  return layout(f, html`<h1>${f.t('reset.heading')}</h1><p id="reset-done">${f.t('reset.done')}</p><p><a href="/login">${f.t('signed_out.again')}</a></p>`);
}
