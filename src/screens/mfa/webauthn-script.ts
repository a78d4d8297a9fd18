/**
 * The one script of the hosted pages, served same-origin at /webauthn.js (the pages' CSP allows
 * `script-src 'self'`, nothing inline). A button `data-webauthn="create|get"` names its options
 * URL (`data-options`) and the form (`data-form`) that carries the result: the script POSTs the
 * form's CSRF token to the options URL, runs navigator.credentials, puts the JSON response into
 * the form's `credential` field and submits it. A form with `data-conditional` also starts a
 * conditional-mediation request (passkey autofill on the email field) when the browser offers it.
 * Its messages come from the page, in the page's language: the status line's `data-unsupported`
 * and `data-incomplete` (`{reason}` filled with the browser's error name).
 */
export const WEBAUTHN_SCRIPT = `'use strict';
(function () {
  var b64 = function (buf) {
    var s = '';
    var bytes = new Uint8Array(buf);
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  };
  var unb64 = function (str) {
    var s = atob(str.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((str.length + 3) % 4));
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out.buffer;
  };
  var descriptors = function (list) {
    return (list || []).map(function (c) { return { type: c.type, id: unb64(c.id), transports: c.transports }; });
  };
  var creationOptions = function (o) {
    var p = Object.assign({}, o, { challenge: unb64(o.challenge), user: Object.assign({}, o.user, { id: unb64(o.user.id) }) });
    p.excludeCredentials = descriptors(o.excludeCredentials);
    return p;
  };
  var requestOptions = function (o) {
    return Object.assign({}, o, { challenge: unb64(o.challenge), allowCredentials: descriptors(o.allowCredentials) });
  };
  var toJSON = function (cred) {
    var r = cred.response;
    var response = { clientDataJSON: b64(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = b64(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = b64(r.authenticatorData);
      response.signature = b64(r.signature);
      if (r.userHandle) response.userHandle = b64(r.userHandle);
    }
    return JSON.stringify({ id: cred.id, rawId: b64(cred.rawId), type: cred.type, response: response,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      authenticatorAttachment: cred.authenticatorAttachment || undefined });
  };
  var options = function (url, form) {
    var body = new URLSearchParams();
    body.set('csrf_token', form.elements.csrf_token.value);
    return fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body })
      .then(function (res) { if (!res.ok) throw new Error('options ' + res.status); return res.json(); });
  };
  var report = function (which, reason) {
    var el = document.getElementById('webauthn-status');
    if (el) { el.textContent = (el.getAttribute('data-' + which) || '').replace('{reason}', reason || ''); el.hidden = false; }
  };
  var submit = function (form, cred) {
    form.elements.credential.value = toJSON(cred);
    form.submit();
  };
  var pending = null;
  var run = function (kind, url, form, mediation) {
    if (pending) pending.abort();
    var ctl = new AbortController();
    pending = ctl;
    return options(url, form).then(function (o) {
      if (kind === 'create') return navigator.credentials.create({ publicKey: creationOptions(o), signal: ctl.signal });
      var req = { publicKey: requestOptions(o), signal: ctl.signal };
      if (mediation) req.mediation = mediation;
      return navigator.credentials.get(req);
    }).then(function (cred) {
      if (cred) submit(form, cred);
    });
  };
  document.querySelectorAll('[data-webauthn]').forEach(function (button) {
    button.hidden = false;
    button.addEventListener('click', function (ev) {
      ev.preventDefault();
      if (!window.PublicKeyCredential) { report('unsupported'); return; }
      var form = document.getElementById(button.getAttribute('data-form'));
      run(button.getAttribute('data-webauthn'), button.getAttribute('data-options'), form).catch(function (e) {
        if (e && e.name === 'AbortError') return;
        report('incomplete', e && e.name ? e.name : 'error');
      });
    });
  });
  var conditional = document.querySelector('form[data-conditional]');
  if (conditional && window.PublicKeyCredential && PublicKeyCredential.isConditionalMediationAvailable) {
    PublicKeyCredential.isConditionalMediationAvailable().then(function (ok) {
      if (ok) return run('get', conditional.getAttribute('data-conditional'), conditional, 'conditional');
    }).catch(function () {});
  }
})();
`;
