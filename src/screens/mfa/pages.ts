/** The /mfa pages: factors overview, TOTP enrolment, recovery codes, the sign-in challenge. */
import type { PasskeyRecord } from '../../storage/repos/mfa.js';
import { type Html, html } from '../html.js';
import { hidden, layout, type PageFrame, webauthnStatus, when } from '../pages.js';

const SCRIPT = html`<script src="/webauthn.js" defer></script>`;

export interface MfaView {
  csrf: string;
  email: string;
  fresh: boolean;
  passkeys: PasskeyRecord[];
  totp: boolean;
  recoveryCodes: number;
  message?: string;
  notice?: string;
}

export function mfaPage(f: PageFrame, v: MfaView): Html {
  const post = (action: string, label: string, extra: Html | string = '') =>
    html`<form method="post" action="${action}" class="inline">${hidden('csrf_token', v.csrf)}${extra}<button type="submit" class="secondary">${label}</button></form>`;
  return layout(
    f,
    html`<h1>${f.t('mfa.heading')}</h1>
<p>${f.t.html('sessions.signed_in_as', { email: html`<strong>${v.email}</strong>` })}</p>
${v.message ? html`<p class="error" role="alert" id="mfa-error">${v.message}</p>` : ''}${v.notice ? html`<p id="mfa-notice">${v.notice}</p>` : ''}
${v.fresh ? '' : html`<p id="reauth">${f.t.html('mfa.reauth', { link: html`<a href="/login?return_to=%2Fmfa&amp;reauth=1">${f.t('mfa.reauth_link')}</a>` })}</p>`}
<h1>${f.t('mfa.passkeys')}</h1>
${v.passkeys.length === 0 ? html`<p>${f.t('mfa.no_passkeys')}</p>` : ''}
<table><tbody>${v.passkeys.map(
      (
        p,
      ) => html`<tr data-passkey="${p.id}"><td><strong>${p.name}</strong><br><small>${f.t('mfa.added', { date: when(p.createdAt) })}${p.lastUsedAt ? html` · ${f.t('mfa.last_used', { date: when(p.lastUsedAt) })}` : ''}</small>${p.disabledAt ? html`<br><small class="error" data-disabled>${f.t('mfa.disabled', { date: when(p.disabledAt) })}</small>` : ''}
<form method="post" action="/mfa/passkeys/rename" class="inline">${hidden('csrf_token', v.csrf)}${hidden('passkey_id', p.id)}<input type="text" name="name" aria-label="${f.t('mfa.new_name')}" maxlength="100" required value="${p.name}"><button type="submit" class="secondary">${f.t('mfa.rename')}</button></form></td>
<td>${v.fresh ? post('/mfa/passkeys/remove', f.t('mfa.remove'), hidden('passkey_id', p.id)) : ''}</td></tr>`,
    )}</tbody></table>
${
  v.fresh
    ? html`<form method="post" action="/mfa/passkeys" id="passkey-register-form">${hidden('csrf_token', v.csrf)}<input type="hidden" name="credential" value="">
<label for="passkey-name">${f.t('mfa.passkey_name')}</label><input id="passkey-name" type="text" name="name" maxlength="100" placeholder="${f.t('mfa.passkey_placeholder')}">
<button type="button" id="passkey-register" data-webauthn="create" data-options="/mfa/passkeys/options" data-form="passkey-register-form">${f.t('mfa.add_passkey')}</button></form>${webauthnStatus(f)}`
    : ''
}
<h1>${f.t('mfa.totp_heading')}</h1>
${v.totp ? html`<p id="totp-on">${f.t('mfa.totp_on')}</p>${v.fresh ? post('/mfa/totp/remove', f.t('mfa.totp_remove')) : ''}` : html`<p><a href="/mfa/totp">${f.t('mfa.totp_setup')}</a></p>`}
<h1>${f.t('mfa.recovery_heading')}</h1>
<p>${f.t('mfa.recovery_count', { count: v.recoveryCodes })}</p>
${v.fresh ? post('/mfa/recovery-codes', f.t('mfa.recovery_generate')) : ''}
<p><a href="/sessions">${f.t('mfa.sessions_link')}</a></p>
${SCRIPT}`,
  );
}

export interface TotpView {
  csrf: string;
  flow?: string;
  returnTo?: string;
  enrolment?: { uri: string; svg: string; secret: string };
  message?: string;
}

/** The QR code is SVG markup rendered on the server (qrcode), inserted as trusted template output. */
export function totpPage(f: PageFrame, v: TotpView, qr: Html | undefined): Html {
  const context = html`${hidden('csrf_token', v.csrf)}${hidden('flow', v.flow)}${hidden('return_to', v.returnTo)}`;
  return layout(
    f,
    html`<h1>${f.t('totp.heading')}</h1>
${v.message ? html`<p class="error" role="alert">${v.message}</p>` : ''}
${
  v.enrolment && qr
    ? html`<p>${f.t('totp.scan')}</p>
<div class="qr" id="totp-qr">${qr}</div>
<p>${f.t.html('totp.by_hand', { secret: html`<code id="totp-secret">${v.enrolment.secret}</code>` })}</p>
<p><a href="${v.enrolment.uri}" id="totp-uri">${f.t('totp.open')}</a></p>
<form method="post" action="/mfa/totp/confirm">${context}
<label for="code">${f.t('totp.code')}</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">${f.t('totp.confirm')}</button></form>`
    : html`<form method="post" action="/mfa/totp/start">${context}<button type="submit">${f.t('totp.start')}</button></form>`
}`,
  );
}

export function recoveryCodesPage(f: PageFrame, v: { codes: string[]; next: string }): Html {
  return layout(
    f,
    html`<h1>${f.t('recovery.heading')}</h1>
<p>${f.t('recovery.keep')}</p>
<ul class="codes" id="recovery-codes">${v.codes.map((c) => html`<li>${c}</li>`)}</ul>
<p><a href="${v.next}" id="continue">${f.t('recovery.continue')}</a></p>`,
  );
}

export interface ChallengeView {
  csrf: string;
  flow?: string;
  returnTo?: string;
  totp: boolean;
  passkeys: boolean;
  /** The policy requires a second factor and the user has none: enrol first. */
  enrol: boolean;
  /** Only a passkey satisfies this sign-in (acr_values=phr). */
  passkeyOnly: boolean;
  message?: string;
}

export function challengePage(f: PageFrame, v: ChallengeView): Html {
  const context = html`${hidden('csrf_token', v.csrf)}${hidden('flow', v.flow)}${hidden('return_to', v.returnTo)}`;
  const query = new URLSearchParams({ ...(v.flow ? { flow: v.flow } : {}), ...(v.returnTo ? { return_to: v.returnTo } : {}) }).toString();
  return layout(
    f,
    html`<h1>${f.t('challenge.heading')}</h1>
${v.message ? html`<p class="error" role="alert" id="challenge-error">${v.message}</p>` : ''}
${
  v.enrol
    ? html`<p id="enrol">${f.t('challenge.enrol')}</p>
<form method="post" action="/mfa/passkeys" id="passkey-enrol-form">${context}<input type="hidden" name="credential" value="">
<label for="passkey-name">${f.t('mfa.passkey_name')}</label><input id="passkey-name" type="text" name="name" maxlength="100" placeholder="${f.t('mfa.passkey_placeholder')}">
<button type="button" id="passkey-enrol" data-webauthn="create" data-options="/mfa/passkeys/options" data-form="passkey-enrol-form">${f.t('mfa.add_passkey')}</button></form>${webauthnStatus(f)}
<p><a href="/mfa/totp${query ? `?${query}` : ''}" id="totp-enrol">${f.t('mfa.totp_setup')}</a></p>`
    : ''
}
${
  v.totp && !v.passkeyOnly
    ? html`<form method="post" action="/mfa/challenge">${context}
<label for="code">${f.t('challenge.code')}</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6">
<button type="submit">${f.t('challenge.continue')}</button></form>`
    : ''
}
${
  v.passkeys
    ? html`<form method="post" action="/mfa/challenge/passkey" id="challenge-passkey-form">${context}<input type="hidden" name="credential" value="">
<button type="button" id="passkey-verify" data-webauthn="get" data-options="/mfa/challenge/passkey/options" data-form="challenge-passkey-form">${f.t('challenge.passkey')}</button></form>${webauthnStatus(f)}`
    : ''
}
${
  !v.enrol && !v.passkeyOnly
    ? html`<form method="post" action="/mfa/challenge">${context}
<label for="recovery_code">${f.t('challenge.recovery')}</label><input id="recovery_code" name="recovery_code" type="text" autocomplete="off" maxlength="64">
<button type="submit" class="secondary">${f.t('challenge.use_recovery')}</button></form>`
    : ''
}
${SCRIPT}`,
  );
}
