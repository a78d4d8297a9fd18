/** The /mfa pages: factors overview, TOTP enrolment, recovery codes, the sign-in challenge. */
import type { PasskeyRecord } from '../../storage/repos/mfa.js';
import { type Html, html } from '../html.js';
import { hidden, layout, type PageFrame, when } from '../pages.js';

const SCRIPT = html`<script src="/webauthn.js" defer></script>`;
const status = html`<p class="error" id="webauthn-status" aria-live="polite" hidden></p>`;

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
    html`<h1>Sign-in methods</h1>
<p>Signed in as <strong>${v.email}</strong>.</p>
${v.message ? html`<p class="error" role="alert" id="mfa-error">${v.message}</p>` : ''}${v.notice ? html`<p id="mfa-notice">${v.notice}</p>` : ''}
${v.fresh ? '' : html`<p id="reauth">To add or remove a sign-in method, <a href="/login?return_to=%2Fmfa&amp;reauth=1">confirm it is you</a> first.</p>`}
<h1>Passkeys</h1>
${v.passkeys.length === 0 ? html`<p>No passkeys yet.</p>` : ''}
<table><tbody>${v.passkeys.map(
      (p) => html`<tr data-passkey="${p.id}"><td><strong>${p.name}</strong><br><small>Added ${when(p.createdAt)}${p.lastUsedAt ? html` · last used ${when(p.lastUsedAt)}` : ''}</small>${p.disabledAt ? html`<br><small class="error" data-disabled>Disabled ${when(p.disabledAt)}: its signature counter went backwards, so it may have been copied. Remove it and add a new passkey.</small>` : ''}
<form method="post" action="/mfa/passkeys/rename" class="inline">${hidden('csrf_token', v.csrf)}${hidden('passkey_id', p.id)}<input type="text" name="name" aria-label="New name" maxlength="100" required value="${p.name}"><button type="submit" class="secondary">Rename</button></form></td>
<td>${v.fresh ? post('/mfa/passkeys/remove', 'Remove', hidden('passkey_id', p.id)) : ''}</td></tr>`,
    )}</tbody></table>
${v.fresh
      ? html`<form method="post" action="/mfa/passkeys" id="passkey-register-form">${hidden('csrf_token', v.csrf)}<input type="hidden" name="credential" value="">
<label for="passkey-name">Name of the new passkey</label><input id="passkey-name" type="text" name="name" maxlength="100" placeholder="e.g. Work laptop">
<button type="button" id="passkey-register" data-webauthn="create" data-options="/mfa/passkeys/options" data-form="passkey-register-form">Add a passkey</button></form>${status}`
      : ''}
<h1>Authenticator app</h1>
${v.totp ? html`<p id="totp-on">An authenticator app is set up.</p>${v.fresh ? post('/mfa/totp/remove', 'Remove the authenticator app') : ''}` : html`<p><a href="/mfa/totp">Set up an authenticator app</a></p>`}
<h1>Recovery codes</h1>
<p>${v.recoveryCodes} unused recovery codes.</p>
${v.fresh ? post('/mfa/recovery-codes', 'Generate new recovery codes') : ''}
<p><a href="/sessions">Your sessions</a></p>
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
    html`<h1>Set up an authenticator app</h1>
${v.message ? html`<p class="error" role="alert">${v.message}</p>` : ''}
${v.enrolment && qr
      ? html`<p>Scan this code with your authenticator app, then enter the 6-digit code it shows.</p>
<div class="qr" id="totp-qr">${qr}</div>
<p>Or enter this key by hand: <code id="totp-secret">${v.enrolment.secret}</code></p>
<p><a href="${v.enrolment.uri}" id="totp-uri">Open in an authenticator app on this device</a></p>
<form method="post" action="/mfa/totp/confirm">${context}
<label for="code">Code</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">Confirm</button></form>`
      : html`<form method="post" action="/mfa/totp/start">${context}<button type="submit">Start</button></form>`}`,
  );
}

export function recoveryCodesPage(f: PageFrame, v: { codes: string[]; next: string }): Html {
  return layout(
    f,
    html`<h1>Your recovery codes</h1>
<p>Keep these codes somewhere safe. Each works once, in place of your authenticator app or passkey. They are shown only now.</p>
<ul class="codes" id="recovery-codes">${v.codes.map((c) => html`<li>${c}</li>`)}</ul>
<p><a href="${v.next}" id="continue">Continue</a></p>`,
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
    html`<h1>Confirm it is you</h1>
${v.message ? html`<p class="error" role="alert" id="challenge-error">${v.message}</p>` : ''}
${v.enrol
      ? html`<p id="enrol">Your organization requires a second sign-in step. Add a passkey or set up an authenticator app to continue.</p>
<form method="post" action="/mfa/passkeys" id="passkey-enrol-form">${context}<input type="hidden" name="credential" value="">
<label for="passkey-name">Name of the new passkey</label><input id="passkey-name" type="text" name="name" maxlength="100" placeholder="e.g. Work laptop">
<button type="button" id="passkey-enrol" data-webauthn="create" data-options="/mfa/passkeys/options" data-form="passkey-enrol-form">Add a passkey</button></form>${status}
<p><a href="/mfa/totp${query ? `?${query}` : ''}" id="totp-enrol">Set up an authenticator app</a></p>`
      : ''}
${v.totp && !v.passkeyOnly
      ? html`<form method="post" action="/mfa/challenge">${context}
<label for="code">Code from your authenticator app</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6">
<button type="submit">Continue</button></form>`
      : ''}
${v.passkeys
      ? html`<form method="post" action="/mfa/challenge/passkey" id="challenge-passkey-form">${context}<input type="hidden" name="credential" value="">
<button type="button" id="passkey-verify" data-webauthn="get" data-options="/mfa/challenge/passkey/options" data-form="challenge-passkey-form">Use a passkey</button></form>${status}`
      : ''}
${!v.enrol && !v.passkeyOnly
      ? html`<form method="post" action="/mfa/challenge">${context}
<label for="recovery_code">Or a recovery code</label><input id="recovery_code" name="recovery_code" type="text" autocomplete="off" maxlength="64">
<button type="submit" class="secondary">Use recovery code</button></form>`
      : ''}
${SCRIPT}`,
  );
}
