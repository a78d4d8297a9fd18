/** The hosted pages of sign-up and passwordless sign-in by email (docs/signup.md). */
import { type Html, html } from './html.js';
import { hidden, layout, type PageFrame } from './pages.js';

/** A refusal on the page: its words, and its error code for scripts and tests. */
const alert = (message: string | undefined, error: string | undefined) =>
  message ? html`<p class="error" role="alert" id="message" data-error="${error ?? ''}">${message}</p>` : '';

interface Context {
  flow?: string;
  returnTo?: string;
}

const context = (v: Context) => html`${hidden('flow', v.flow)}${hidden('return_to', v.returnTo)}`;

export function signupPage(f: PageFrame, v: Context & { csrf: string; email?: string; message?: string; error?: string; loginHref: string }): Html {
  return layout(
    f,
    html`<h1>${f.t('signup.heading')}</h1>${alert(v.message, v.error)}
<form method="post" action="/signup">${hidden('csrf_token', v.csrf)}${context(v)}
<label for="email">${f.t('signup.email')}</label><input id="email" name="email" type="email" autocomplete="username" required value="${v.email ?? ''}">
<label for="password">${f.t('signup.password')}</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="8" maxlength="256" required>
<label for="password_repeat">${f.t('signup.repeat')}</label><input id="password_repeat" name="password_repeat" type="password" autocomplete="new-password" minlength="8" maxlength="256" required>
<button type="submit" id="signup-submit">${f.t('signup.submit')}</button></form>
<p><a href="${v.loginHref}" id="sign-in-instead">${f.t('signup.have_account')}</a></p>`,
  );
}

/** "Check your email": the code typed here completes the challenge (`action`: /signup/code or /login/email/code). */
export function emailCodePage(
  f: PageFrame,
  v: Context & { csrf: string; action: string; challenge: string; intro: string; message?: string; error?: string; againHref: string },
): Html {
  return layout(
    f,
    html`<h1>${f.t('code.heading')}</h1>${alert(v.message, v.error)}<p id="code-intro">${v.intro}</p>
<form method="post" action="${v.action}">${hidden('csrf_token', v.csrf)}${hidden('challenge', v.challenge)}${context(v)}
<label for="code">${f.t('verify.code')}</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit" id="code-submit">${f.t('code.submit')}</button></form>
<p><a href="${v.againHref}">${f.t('code.again')}</a></p>`,
  );
}

/** The page an emailed link opens: one button, so a mail scanner's GET uses nothing. */
export function emailLinkPage(f: PageFrame, v: { csrf: string; action: string; token: string }): Html {
  return layout(
    f,
    html`<h1>${f.t('code.link_heading')}</h1><p>${f.t('code.link_intro')}</p>
<form method="post" action="${v.action}">${hidden('csrf_token', v.csrf)}${hidden('token', v.token)}<button type="submit" id="confirm">${f.t('code.submit')}</button></form>`,
  );
}
