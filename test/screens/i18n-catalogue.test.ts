/**
 * The message catalogue walked key by key (docs/branding.md): every hosted page, in each state
 * that shows text, rendered in German shows no English message (but the few identical by
 * design, listed here), and every key of the catalogue is shown by some page (no orphans).
 * Also the choice of language: ui_locales, then Accept-Language by q-value, then the default.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DEFAULT_BRAND } from '../../src/screens/brand.js';
import { activatePage, deviceConsentPage, deviceDonePage } from '../../src/screens/device-pages.js';
import { homePage } from '../../src/screens/home.js';
import { Html } from '../../src/screens/html.js';
import { acceptLanguageTags, CATALOGUES, en, type MessageKey, negotiateLocale, type Translator, translator } from '../../src/screens/i18n/index.js';
import { challengePage, mfaPage, recoveryCodesPage, totpPage } from '../../src/screens/mfa/pages.js';
import {
  connectListPage,
  connectStartPage,
  consentPage,
  errorPage,
  loginPage,
  logoutPage,
  type PageFrame,
  sessionsPage,
  signedOutPage,
  when,
} from '../../src/screens/pages.js';
import type { PasskeyRecord } from '../../src/storage/repos/mfa.js';
import { renderEmail } from '../../src/email/templates.js';
import { ACCOUNT_NOTICES, accountPage, emailChangePage } from '../../src/screens/account-pages.js';
import { forgotPage, forgotSentPage, resetDonePage, resetPage, verifiedPage, verifyCodePage, verifyLinkPage } from '../../src/screens/email-pages.js';
import {
  invitationAcceptPage,
  invitationCreatePage,
  invitationDonePage,
  invitationSignInPage,
  invitationSwitchPage,
} from '../../src/screens/invitation-pages.js';
import { emailCodePage, emailLinkPage, signupPage } from '../../src/screens/signup-pages.js';

const KEYS = Object.keys(en) as MessageKey[];

/** German words that are the English ones by design: product terms. */
const IDENTICAL: readonly MessageKey[] = ['mfa.passkeys', 'totp.code', 'home.discovery_link', 'method.passkey'];
/** Names on the pages that are no message: products, protocols, the brand. */
const NAMES = ['OpenID Connect', 'OAuth 2.0', 'SCIM', 'API', 'README', 'Keyhall', 'GitHub', 'Acme Portal'];

/** What the pages are filled with (no English words: they would be mistaken for untranslated text). */
const SAMPLE: Record<string, string> = {
  client: 'Acme Portal',
  provider: 'GitHub',
  email: 'ada@beispiel.de',
  date: when(Date.UTC(2026, 0, 2, 10, 0)),
  count: '3',
  aaguid: 'ee882879-721c-4913-9775-3dfcce97072a',
  status: 'REVOKED',
  reason: 'NotAllowedError',
  detail: 'invalid_grant',
  action: 'x',
  name: 'GitHub',
};
const fill = (text: string) => text.replace(/\{([a-z_]+)\}/g, (m, n: string) => SAMPLE[n] ?? m);

const passkey = (over: Partial<PasskeyRecord>): PasskeyRecord => ({
  id: 'pk_1',
  tenantId: 't',
  userId: 'u',
  credentialId: 'c',
  publicKey: 'k',
  counter: 0,
  transports: [],
  aaguid: SAMPLE.aaguid!,
  name: 'Laptop',
  backedUp: false,
  attestationFormat: 'none',
  attestationVerified: false,
  createdAt: Date.UTC(2026, 0, 1),
  lastUsedAt: null,
  disabledAt: null,
  ...over,
});

/** The English texts other layers hand to a page (error descriptions, services' refusals), as they write them. */
const englishFrom = (prefix: string) => KEYS.filter((k) => k.startsWith(prefix)).map((k) => fill(en[k]));

/** Every hosted page in every state that shows text, with `t`. */
function renderAll(t: Translator): Array<{ page: string; html: string }> {
  const f: PageFrame = { title: '', brand: DEFAULT_BRAND, nonce: 'n', t };
  const out: Array<{ page: string; html: string }> = [];
  const add = (page: string, h: Html) => out.push({ page, html: h.value });
  const session = {
    id: 's1',
    tenantId: 't',
    userId: 'u',
    userAgent: null,
    ip: null,
    authTime: 0,
    createdAt: 0,
    lastSeenAt: 0,
    idleExpiresAt: 0,
    expiresAt: 0,
    revokedAt: null,
  };
  const connection = { connectionId: 'sso_1', connectionName: 'Okta', organizationName: 'Acme' };

  add('home', homePage(f, { issuer: 'https://id.beispiel.de', documents: ['/v1/openapi.json', '/openapi/oauth.json'] }));
  for (const description of [...englishFrom('error.'), ...englishFrom('sso.'), ...englishFrom('social.')])
    add(`error: ${description}`, errorPage(f, 'invalid_request', description));
  for (const code of ['invalid_request', 'not_found', 'forbidden', 'conflict', 'access_denied', 'csrf_failed', 'server_error', 'unknown_code']) {
    add(`error ${code}`, errorPage(f, code, 'a description from a protocol layer'));
  }
  add('error without description', errorPage(f, 'server_error', undefined));

  add('login', loginPage(f, { csrf: 'c' }));
  add('login with social buttons', loginPage(f, { csrf: 'c', flow: 'fl', social: [{ id: 'soc_1', name: 'GitHub' }] }));
  for (const key of ['login.bad_credentials', 'login.too_many', 'login.sso_unavailable'] as const) {
    add(`login ${key}`, loginPage(f, { csrf: 'c', flow: 'fl', clientName: SAMPLE.client, ssoHint: true, message: t(key) }));
  }
  for (const english of englishFrom('passkey.')) add(`login: ${english}`, loginPage(f, { csrf: 'c', message: t.known(english, 'passkey.sign_in_failed') }));

  add(
    'consent',
    consentPage(f, {
      csrf: 'c',
      flow: 'fl',
      clientName: SAMPLE.client!,
      scopes: ['openid', 'profile', 'email', 'offline_access', 'mcp:read', 'mcp:connected_accounts', 'mcp:credentials'],
      resources: ['https://api.beispiel.de'],
    }),
  );
  add('consent, no scope', consentPage(f, { csrf: 'c', flow: 'fl', clientName: SAMPLE.client!, scopes: [], resources: [] }));
  add('logout', logoutPage(f, { csrf: 'c' }));
  add('logout of a client', logoutPage(f, { csrf: 'c', clientName: SAMPLE.client }));
  add('signed out', signedOutPage(f));

  const consents = [{ clientId: 'cli_1', clientName: SAMPLE.client!, scopes: ['openid'], resources: [] }];
  add(
    'sessions',
    sessionsPage(f, { csrf: 'c', email: SAMPLE.email!, currentId: 's1', sessions: [session], consents, sso: { linked: [connection], offered: [connection] } }),
  );
  add(
    'sessions, nothing linked',
    sessionsPage(f, { csrf: 'c', email: SAMPLE.email!, currentId: 's1', sessions: [session], consents: [], sso: { linked: [], offered: [connection] } }),
  );

  const account = { id: 'ca_1', providerName: 'GitHub', organizationName: 'Acme', scopes: ['repo'] };
  add(
    'connect',
    connectListPage(f, {
      csrf: 'c',
      email: SAMPLE.email!,
      connected: 'ca_1',
      accounts: [
        { ...account, status: 'active' },
        { ...account, id: 'ca_2', status: 'reauthorization_required' },
      ],
      providers: [{ id: 'cp_1', name: 'GitHub' }],
    }),
  );
  add('connect, empty', connectListPage(f, { csrf: 'c', email: SAMPLE.email!, accounts: [], providers: [] }));
  add(
    'connect start',
    connectStartPage(f, { csrf: 'c', providerId: 'cp_1', providerName: 'GitHub', scopes: ['repo'], organizations: [{ id: 'org_1', name: 'Acme' }] }),
  );

  const factors = { csrf: 'c', email: SAMPLE.email!, recoveryCodes: 3 };
  add(
    'mfa',
    mfaPage(f, {
      ...factors,
      fresh: true,
      totp: true,
      passkeys: [passkey({ lastUsedAt: Date.UTC(2026, 0, 2) }), passkey({ id: 'pk_2', disabledAt: Date.UTC(2026, 0, 3) })],
    }),
  );
  add('mfa, stale', mfaPage(f, { ...factors, fresh: false, totp: false, passkeys: [] }));
  const actions = ['mfa.action_add_passkey', 'mfa.action_remove_passkey', 'mfa.action_remove_totp', 'mfa.action_recovery_codes'] as const;
  for (const action of actions)
    add(`mfa ${action}`, mfaPage(f, { ...factors, fresh: false, totp: false, passkeys: [], message: t('mfa.confirm_first', { action: t(action) }) }));
  for (const key of ['mfa.rename_failed', 'mfa.no_such_passkey'] as const)
    add(`mfa ${key}`, mfaPage(f, { ...factors, fresh: true, totp: false, passkeys: [], message: t(key) }));

  const enrolment = { uri: 'otpauth://totp/x', svg: '<svg></svg>', secret: 'JBSWY3DPEHPK3PXP' };
  add('totp', totpPage(f, { csrf: 'c', enrolment }, new Html(enrolment.svg)));
  for (const key of ['totp.too_many', 'totp.wrong'] as const)
    add(`totp ${key}`, totpPage(f, { csrf: 'c', enrolment, message: t(key) }, new Html(enrolment.svg)));
  add('totp start', totpPage(f, { csrf: 'c' }, undefined));
  add('recovery codes', recoveryCodesPage(f, { codes: ['aaaa-bbbb'], next: '/mfa' }));

  const challenge = { csrf: 'c', flow: 'fl', totp: true, passkeys: true, enrol: false, passkeyOnly: false };
  add('challenge', challengePage(f, challenge));
  add('challenge, enrol', challengePage(f, { ...challenge, totp: false, passkeys: false, enrol: true }));
  for (const key of ['challenge.passkey_only', 'challenge.wrong', 'totp.too_many'] as const)
    add(`challenge ${key}`, challengePage(f, { ...challenge, message: t(key) }));

  add('activate', activatePage(f, { csrf: 'c' }));
  for (const key of ['device.code_invalid', 'device.too_many'] as const)
    add(`activate ${key}`, activatePage(f, { csrf: 'c', userCode: 'WDJB-MJHT', message: t(key) }));
  add(
    'device consent',
    deviceConsentPage(f, { csrf: 'c', flow: 'fl', clientName: SAMPLE.client!, scopes: ['openid', 'email'], resources: ['https://api.beispiel.de'] }),
  );
  add('device consent, no scope', deviceConsentPage(f, { csrf: 'c', flow: 'fl', clientName: SAMPLE.client!, scopes: [], resources: [] }));
  add('device approved', deviceDonePage(f, { approved: true }));
  add('device denied', deviceDonePage(f, { approved: false }));
  // Email links' pages (docs/email.md) and the emails themselves (their HTML is a page too).
  add('verify link', verifyLinkPage(f, { csrf: 'c', token: 'vfy_x' }));
  add('verify code', verifyCodePage(f, { csrf: 'c' }));
  add('verified', verifiedPage(f));
  add('forgot', forgotPage(f, { csrf: 'c', loginHref: '/login' }));
  add('forgot, limited', forgotPage(f, { csrf: 'c', loginHref: '/login', message: t('error.rate_limited') }));
  add('forgot, sent', forgotSentPage(f, { loginHref: '/login' }));
  for (const key of ['error.passwords_differ', 'error.password_length'] as const)
    add(`reset ${key}`, resetPage(f, { csrf: 'c', token: 'rst_x', message: t(key) }));
  add('reset done', resetDonePage(f));
  add(
    'verification email',
    new Html(renderEmail('verify_email', t, DEFAULT_BRAND, { link: 'https://id.beispiel.de/verify-email?token=vfy_x', code: '123456' }).html),
  );
  add('reset email', new Html(renderEmail('password_reset', t, DEFAULT_BRAND, { link: 'https://id.beispiel.de/reset-password?token=rst_x' }).html));
  // Invitations (docs/invitations.md): the accept page in each state, and the email.
  const invited = { organization: 'Beispiel GmbH', email: SAMPLE.email!, csrf: 'c', token: 'ivt_x' };
  add('invitation accept', invitationAcceptPage(f, invited));
  add('invitation sign in', invitationSignInPage(f, { ...invited, loginHref: '/login' }));
  add('invitation create', invitationCreatePage(f, invited));
  for (const key of ['error.passwords_differ', 'error.password_length'] as const)
    add(`invitation create ${key}`, invitationCreatePage(f, { ...invited, message: t(key) }));
  add('invitation switch', invitationSwitchPage(f, { ...invited, current: 'bob@beispiel.de' }));
  add('invitation done', invitationDonePage(f, invited));
  add(
    'invitation email',
    new Html(
      renderEmail('invitation', t, DEFAULT_BRAND, { link: 'https://id.beispiel.de/invitations/accept?token=ivt_x', organization: 'Beispiel GmbH' }).html,
    ),
  );
  // Sign-up and passwordless sign-in by email (docs/signup.md).
  add('login with sign-up and passwordless', loginPage(f, { csrf: 'c', flow: 'fl', signup: true, passwordless: true }));
  add('login, email unverified', loginPage(f, { csrf: 'c', message: t('login.email_unverified'), verifyEmail: SAMPLE.email }));
  add('signup', signupPage(f, { csrf: 'c', flow: 'fl', loginHref: '/login' }));
  for (const key of ['signup.off', 'signup.domain', 'signup.sso', 'signup.exists', 'signup.too_many'] as const)
    add(`signup ${key}`, signupPage(f, { csrf: 'c', loginHref: '/login', message: t(key, { domains: 'beispiel.de' }), error: 'invalid_request' }));
  for (const intro of ['signup', 'signin', 'other_browser'] as const)
    add(
      `email code ${intro}`,
      emailCodePage(f, {
        csrf: 'c',
        action: '/signup/code',
        challenge: 'ech_1',
        intro: t(`code.intro_${intro}`, { email: SAMPLE.email! }),
        againHref: '/signup',
      }),
    );
  for (const key of ['error.email_code_invalid', 'code.too_many'] as const)
    add(
      `email code ${key}`,
      emailCodePage(f, { csrf: 'c', action: '/login/email/code', challenge: 'ech_1', intro: '', message: t(key), error: 'invalid_grant', againHref: '/login' }),
    );
  add('email link', emailLinkPage(f, { csrf: 'c', action: '/signup/verify', token: 'sgn_x' }));
  add(
    'sign-up email',
    new Html(renderEmail('signup_verify', t, DEFAULT_BRAND, { link: 'https://id.beispiel.de/signup/verify?token=sgn_x', code: '123456' }).html),
  );
  add(
    'sign-in email',
    new Html(renderEmail('signin_email', t, DEFAULT_BRAND, { link: 'https://id.beispiel.de/login/email/verify?token=mgl_x', code: '123456' }).html),
  );
  add('sign-in email, code only', new Html(renderEmail('signin_email', t, DEFAULT_BRAND, { code: '123456' }).html));
  add('email change email', new Html(renderEmail('email_change', t, DEFAULT_BRAND, { link: 'https://id.beispiel.de/account/email/verify?token=chg_x' }).html));
  add('email changed email', new Html(renderEmail('email_changed', t, DEFAULT_BRAND, { link: 'https://id.beispiel.de/account' }).html));

  // /account: a session of each sign-in method, each notice, with and without linked accounts.
  const methods = ['password', 'passkey', 'sso', 'social', 'setup_link', 'email'].map((method, i) => ({
    ...session,
    id: `s${i + 1}`,
    method,
    ...(method === 'social' ? { idp: 'soc_1' } : {}),
  }));
  const accountPageView = {
    csrf: 'c',
    email: SAMPLE.email!,
    emailVerified: true,
    currentId: 's1',
    sessions: methods,
    consents,
    sso: { linked: [connection], offered: [connection] },
    identities: [{ id: 'idn_1', connectionName: 'GitHub', email: SAMPLE.email!, linkedAt: 0 }],
    offered: [{ id: 'soc_1', name: 'GitHub' }],
    connectionNames: new Map([['soc_1', 'GitHub']]),
  };
  add('account', accountPage(f, accountPageView));
  add('account, nothing linked', accountPage(f, { ...accountPageView, emailVerified: false, consents: [], identities: [], offered: [] }));
  for (const kind of ACCOUNT_NOTICES) add(`account ${kind}`, accountPage(f, { ...accountPageView, notice: { kind, email: SAMPLE.email! } }));
  add('email change link', emailChangePage(f, { csrf: 'c', token: 'chg_x', email: SAMPLE.email! }));
  return out;
}

/** What a person reads: text nodes and the attributes browsers show or the script displays. */
function readable(page: string): string {
  const attributes = [...page.matchAll(/\s(?:placeholder|aria-label|alt|title|data-unsupported|data-incomplete)="([^"]*)"/g)].map((m) => m[1]);
  const text = page
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<svg[\s\S]*?<\/svg>/g, ' ')
    .replace(/<[^>]+>/g, ' ');
  return [text, ...attributes]
    .join(' \n ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the message catalogue', () => {
  it('German has every key of English and no other; only the listed ones are the same words', () => {
    assert.deepEqual(Object.keys(CATALOGUES.de).sort(), [...KEYS].sort());
    const same = KEYS.filter((k) => CATALOGUES.de[k] === en[k]);
    assert.deepEqual(same.sort(), [...IDENTICAL].sort());
    for (const key of KEYS) {
      const placeholders = (s: string) => [...s.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
      const unknown = placeholders(CATALOGUES.de[key]).filter((p) => !placeholders(en[key]).includes(p));
      assert.deepEqual(unknown, [], `${key}: German placeholders the English message does not have`);
    }
  });

  it('every page in German shows no English message (walking every key)', () => {
    const pages = renderAll(translator('de'));
    assert.ok(pages.length > 60, `${pages.length} pages`);
    for (const { page, html } of pages) {
      assert.match(html, /<html lang="de">/, page);
      let text = readable(html);
      for (const name of NAMES) text = text.split(name).join(' ');
      for (const key of KEYS) {
        if (IDENTICAL.includes(key)) continue;
        for (const segment of en[key].split(/\{[a-z_]+\}/).map((s) => s.trim().replace(/^[:.,;()\s]+|[:.,;()\s]+$/g, ''))) {
          if (segment.length < 2) continue;
          const found = new RegExp(`(?<![\\p{L}])${escapeRegExp(segment)}(?![\\p{L}])`, 'u').test(text);
          assert.ok(!found, `${page}: English "${segment}" (${key}) in ${JSON.stringify(text.replace(/\s+/g, ' ').slice(0, 400))}`);
        }
      }
    }
  });

  it('every key is shown by some page (no orphan keys); titles are named by the routes', () => {
    // Each message replaced by its key, its placeholders kept (messages inside messages show too).
    const markers = Object.fromEntries(KEYS.map((k) => [k, `⟦${k}⟧${(en[k].match(/\{[a-z_]+\}/g) ?? []).join(' ')}`]));
    const pages = renderAll(translator('de', { defaultLocale: 'de', overrides: { de: markers } }));
    const shown = new Set(pages.flatMap(({ html }) => [...html.matchAll(/⟦([a-z_.]+)⟧/g)].map((m) => m[1]!)));
    const http = path.resolve(import.meta.dirname, '../../src/http');
    const routes = readdirSync(http, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(path.join(http, f), 'utf8'))
      .join('\n');
    for (const key of KEYS.filter((k) => k.startsWith('title.'))) if (routes.includes(`'${key}'`)) shown.add(key);
    assert.deepEqual(
      KEYS.filter((k) => !shown.has(k)),
      [],
    );
  });

  it('English pages are the catalogue texts, and a service text the catalogue knows keeps its words', () => {
    const t = translator('en');
    const page = renderAll(t).find((p) => p.page === 'login login.bad_credentials')!.html;
    assert.match(page, /<html lang="en">/);
    assert.match(page, /<h1>Sign in to Acme Portal<\/h1>/);
    assert.match(page, /The email or password is incorrect\./);
    assert.equal(t.known('a text no catalogue has', 'error.generic'), 'a text no catalogue has');
    const revoked = 'This kind of passkey (authenticator model abc) has been reported revoked or compromised (REVOKED). Use another authenticator.';
    assert.equal(t.known(revoked, 'passkey.sign_in_failed'), revoked);
    assert.equal(
      translator('de').known(revoked, 'passkey.sign_in_failed'),
      'Diese Art von Passkey (Authenticator-Modell abc) wurde als widerrufen oder kompromittiert gemeldet (REVOKED). Verwenden Sie einen anderen Authenticator.',
    );
    assert.equal(translator('de').known('a text no catalogue has', 'error.not_found'), CATALOGUES.de['error.not_found']);
  });

  it("a tenant's text is escaped like any other, and fills the message's placeholders", () => {
    const t = translator('de', { defaultLocale: 'en', overrides: { de: { 'login.heading_client': '<b>Willkommen</b> bei {client}' } } });
    const page = loginPage({ title: '', brand: DEFAULT_BRAND, nonce: 'n', t }, { csrf: 'c', clientName: '<Acme>' }).value;
    assert.match(page, /<h1>&lt;b&gt;Willkommen&lt;\/b&gt; bei &lt;Acme&gt;<\/h1>/);
  });
});

describe('the language of a page', () => {
  it('ui_locales first (the first supported, regions count as their language), then Accept-Language, then the tenant default', () => {
    assert.equal(negotiateLocale({ uiLocales: ['fr', 'de-CH'], acceptLanguage: 'en', tenantDefault: 'en' }), 'de');
    assert.equal(negotiateLocale({ uiLocales: ['fr'], acceptLanguage: 'de', tenantDefault: 'en' }), 'de');
    assert.equal(negotiateLocale({ uiLocales: ['en'], acceptLanguage: 'de', tenantDefault: 'de' }), 'en');
    assert.equal(negotiateLocale({ acceptLanguage: 'fr, ja', tenantDefault: 'de' }), 'de');
    assert.equal(negotiateLocale({ tenantDefault: 'de' }), 'de');
    assert.equal(negotiateLocale({ tenantDefault: 'en' }), 'en');
  });

  it('Accept-Language by q-value (ties keep their order; q=0 and * are no choice)', () => {
    assert.deepEqual(acceptLanguageTags('en;q=0.5, de-DE;q=0.9, fr'), ['fr', 'de-DE', 'en']);
    assert.equal(negotiateLocale({ acceptLanguage: 'en;q=0.5, de-DE;q=0.9, fr', tenantDefault: 'en' }), 'de');
    assert.equal(negotiateLocale({ acceptLanguage: 'de;q=0, en;q=0.1', tenantDefault: 'de' }), 'en');
    assert.equal(negotiateLocale({ acceptLanguage: '*', tenantDefault: 'de' }), 'de');
    assert.equal(negotiateLocale({ acceptLanguage: 'de;q=abc, en', tenantDefault: 'en' }), 'en');
    assert.deepEqual(acceptLanguageTags(undefined), []);
  });
});
