/**
 * The device grant's hosted pages (RFC 8628 §3.3, docs/device-grant.md): /activate (the user
 * code, typed or prefilled from verification_uri_complete, confirmed by a click), the approval
 * page (the client and its scopes), and the page that sends the person back to their device.
 */
import { type Html, html } from './html.js';
import { hidden, layout, type PageFrame, SCOPE_TEXT } from './pages.js';

export interface ActivatePageView {
  csrf: string;
  userCode?: string;
  message?: string;
  /** The refusal's code (`invalid_user_code`, `rate_limited`). */
  error?: string;
}

export function activatePage(f: PageFrame, v: ActivatePageView): Html {
  return layout(
    f,
    html`<h1>${f.t('device.heading')}</h1>
${v.message ? html`<p class="error" role="alert" id="error" data-error="${v.error ?? ''}">${v.message}</p>` : ''}
<p>${f.t('device.intro')}</p>
<form method="post" action="/activate">
${hidden('csrf_token', v.csrf)}
<label for="user_code">${f.t('device.code')}</label>
<input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" required value="${v.userCode ?? ''}">
<button type="submit">${f.t('device.continue')}</button>
</form>`,
  );
}

export function deviceConsentPage(f: PageFrame, v: { csrf: string; flow: string; clientName: string; scopes: string[]; resources: string[] }): Html {
  return layout(
    f,
    html`<h1>${f.t('device.consent_heading', { client: v.clientName })}</h1>
${v.scopes.length === 0 ? html`<p>${f.t('consent.signed_in_only')}</p>` : ''}<ul>${v.scopes.map((s) => html`<li>${Object.hasOwn(SCOPE_TEXT, s) ? f.t(SCOPE_TEXT[s]!) : s}</li>`)}</ul>
${v.resources.length > 0 ? html`<p>${f.t('consent.resources')}</p><ul>${v.resources.map((r) => html`<li>${r}</li>`)}</ul>` : ''}
<p>${f.t('device.consent_check')}</p>
<form method="post" action="/activate/confirm">
${hidden('csrf_token', v.csrf)}${hidden('flow', v.flow)}
<button type="submit" name="decision" value="allow" id="allow">${f.t('consent.allow')}</button>
<button type="submit" name="decision" value="deny" class="secondary" id="deny">${f.t('consent.deny')}</button>
</form>`,
  );
}

export function deviceDonePage(f: PageFrame, v: { approved: boolean }): Html {
  return layout(
    f,
    html`<h1>${f.t('device.heading')}</h1><p id="device-result" data-approved="${v.approved ? 'true' : 'false'}">${f.t(v.approved ? 'device.approved' : 'device.denied')}</p>`,
  );
}
