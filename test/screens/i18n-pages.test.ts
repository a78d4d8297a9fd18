/**
 * The hosted pages' language over HTTP (docs/branding.md): `Accept-Language`, the flow's
 * `ui_locales` (advertised in discovery), the tenant's default locale and its own texts through
 * /v1/branding/texts and /v1/branding/locale, with their refusals and audit events.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { decodeEntities, location, PASSWORD, REDIRECT, type SigninTestServer, startSigninServer } from '../signin/helpers.js';

const h1 = (text: string) => decodeEntities(/<h1>([\s\S]*?)<\/h1>/.exec(text)?.[1] ?? '');

describe('hosted pages in the language asked for', () => {
  let s: SigninTestServer;
  let api: Api;
  before(async () => {
    s = await startSigninServer();
    api = v1(s, s.tenant.platformApiKey);
  });
  after(() => s.close());

  const authorize = (extra: Record<string, string>) =>
    `/authorize?${new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', ...extra })}`;

  it('discovery lists the languages ui_locales may name', async () => {
    const meta = (await s.request({ path: '/.well-known/openid-configuration' })).json();
    assert.deepEqual(meta.ui_locales_supported, ['en', 'de']);
  });

  it('Accept-Language: de without ui_locales gives the German login page; none gives English', async () => {
    const b = s.browser();
    const de = await b.get('/login', { 'accept-language': 'fr;q=1, de-DE;q=0.8, en;q=0.5' });
    assert.equal(de.status, 200);
    assert.match(de.text, /<html lang="de">/);
    assert.equal(de.headers['content-language'], 'de');
    assert.match(String(de.headers.vary), /Accept-Language/i);
    assert.equal(h1(de.text), 'Anmelden');
    assert.match(de.text, /<title>Anmelden · Keyhall<\/title>/);
    assert.match(de.text, />E-Mail-Adresse</);
    assert.match(de.text, /Mit einem Passkey anmelden/);
    const en = await b.get('/login');
    assert.match(en.text, /<html lang="en">/);
    assert.equal(h1(en.text), 'Sign in');
  });

  it("ui_locales=de carries through the flow: the login page and its refusal are German whatever the browser's language", async () => {
    await s.createUser('ui-locales@example.com');
    const web = await s.webClient({ client_name: 'Acme Portal' });
    const b = s.browser();
    const r = await b.get(authorize({ client_id: web.client_id, ui_locales: 'fr de' }), { 'accept-language': 'en' });
    const login = await b.get(location(r), { 'accept-language': 'en' });
    assert.equal(login.status, 200);
    assert.match(login.text, /<html lang="de">/);
    assert.equal(h1(login.text), 'Bei Acme Portal anmelden');
    const refused = await b.submit(login, { email: 'ui-locales@example.com', password: `${PASSWORD}!` });
    assert.equal(refused.status, 401);
    assert.match(refused.text, /E-Mail-Adresse oder Passwort ist falsch\./);
    // An English ui_locales wins over a German browser.
    const english = await b.get(location(await b.get(authorize({ client_id: web.client_id, ui_locales: 'en-GB' }))), { 'accept-language': 'de' });
    assert.equal(h1(english.text), 'Sign in to Acme Portal');
  });

  it('ui_locales longer than 256 characters is refused at /authorize', async () => {
    const web = await s.webClient();
    const r = await s.browser().get(authorize({ client_id: web.client_id, ui_locales: 'de '.repeat(90) }));
    const cb = new URL(location(r));
    assert.equal(cb.searchParams.get('error'), 'invalid_request');
  });

  it('error pages explain in German: an unknown SSO connection, a failed CSRF check, a gone flow', async () => {
    const b = s.browser();
    const sso = await b.get('/sso/sso_0000000000000000000000000000/start', { 'accept-language': 'de' });
    assert.equal(sso.status, 404);
    assert.match(sso.text, /data-error="not_found">Diese Single-Sign-on-Verbindung gibt es nicht\.</);
    assert.match(sso.text, /<h1>Etwas ist schiefgegangen<\/h1>/);
    const csrf = await b.post('/login', { email: 'x@example.com', password: 'x' }, { 'accept-language': 'de' });
    assert.equal(csrf.status, 403);
    assert.match(decodeEntities(csrf.text), /Dieses Formular ist abgelaufen oder stammt nicht von dieser Website\./);
    const gone = await b.get('/login?flow=flw_unknown', { 'accept-language': 'de' });
    assert.equal(gone.status, 400);
    assert.match(gone.text, /Diese Anmeldeseite ist abgelaufen oder wurde bereits verwendet\./);
    // The same pages in English keep their words.
    assert.match((await b.get('/login?flow=flw_unknown')).text, /This sign-in page has expired or was already used\./);
  });

  it("a tenant's own texts replace the catalogue's, per locale; its default locale applies without a preference", async () => {
    const put = await api('PUT', '/branding/texts', { de: { 'login.heading': 'Willkommen bei Acme' }, en: { 'login.heading': 'Welcome to <Acme>' } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json(), { de: { 'login.heading': 'Willkommen bei Acme' }, en: { 'login.heading': 'Welcome to <Acme>' } });
    assert.deepEqual((await api('GET', '/branding/texts')).json(), put.json());
    const b = s.browser();
    assert.equal(h1((await b.get('/login', { 'accept-language': 'de' })).text), 'Willkommen bei Acme');
    const en = await b.get('/login');
    assert.match(en.text, /<h1>Welcome to &lt;Acme&gt;<\/h1>/, 'escaped like any text');
    // Messages it does not replace stay the catalogue's.
    assert.match(en.text, /Sign in with a passkey/);

    assert.deepEqual((await api('GET', '/branding/locale')).json(), {
      default_locale: 'en',
      updated_at: (await api('GET', '/branding/locale')).json().updated_at,
    });
    const locale = await api('PUT', '/branding/locale', { default_locale: 'de' });
    assert.equal(locale.status, 200, locale.text);
    assert.equal(locale.json().default_locale, 'de');
    assert.equal(h1((await b.get('/login')).text), 'Willkommen bei Acme');
    assert.equal(h1((await b.get('/login', { 'accept-language': 'en' })).text), 'Welcome to <Acme>');
    assert.deepEqual((await api('GET', '/branding/texts')).json(), put.json(), 'the locale leaves the texts as they are');

    const events = (await api('GET', '/events?limit=100&types=branding.texts.updated,branding.locale.updated')).json().data as Array<{
      type: string;
      data: unknown;
    }>;
    assert.deepEqual(events.map((e) => [e.type, e.data]).sort(), [
      ['branding.locale.updated', { default_locale: 'de' }],
      ['branding.texts.updated', { overrides: { de: 1, en: 1 } }],
    ]);

    // An empty document restores the catalogue's texts; English again by default.
    assert.deepEqual((await api('PUT', '/branding/texts', {})).json(), {});
    assert.equal((await api('PUT', '/branding/locale', { default_locale: 'en' })).status, 200);
    assert.equal(h1((await b.get('/login')).text), 'Sign in');
  });

  it('/v1/branding refuses unknown locales and keys, oversized or empty texts, foreign placeholders (400 invalid_request)', async () => {
    const refusals: Array<[string, unknown]> = [
      ['unknown locale', { fr: { 'login.heading': 'Bienvenue' } }],
      ['unknown key', { de: { 'login.welcome': 'Hallo' } }],
      ['a text too long', { de: { 'login.heading': 'x'.repeat(1001) } }],
      ['an empty text', { de: { 'login.heading': '' } }],
      ['a placeholder the message does not have', { de: { 'login.heading': 'Hallo {email}' } }],
      ['a text that is no string', { de: { 'login.heading': 5 } }],
      ['a locale that is no object', { de: 'Hallo' }],
      ['not an object', ['de']],
    ];
    for (const [what, body] of refusals) {
      const r = await api('PUT', '/branding/texts', body);
      assert.equal(r.status, 400, `${what}: ${r.status} ${r.text}`);
      assert.equal(r.json().error, 'invalid_request', what);
    }
    expectError(await api('PUT', '/branding/locale', { default_locale: 'fr' }), 400, 'invalid_request');
    expectError(await api('PUT', '/branding/locale', { default_locale: 'de', extra: 1 }), 400, 'invalid_request');
    assert.deepEqual((await api('GET', '/branding/texts')).json(), {}, 'nothing was stored');
    // A placeholder the message has is fine.
    assert.equal((await api('PUT', '/branding/texts', { de: { 'login.heading_client': 'Willkommen bei {client}' } })).status, 200);
    assert.equal((await api('PUT', '/branding/texts', {})).status, 200);
  });

  it('reading and writing the texts take branding:read and branding:write; an organization key is refused', async () => {
    const mint = async (org: string | null, scopes: string[]) =>
      v1(s, (await s.server.ctx.management.apiKeys.createAsOperator(s.tenant.tenant.id, org, { name: 'branding', scopes })).key);
    const reader = await mint(null, ['branding:read']);
    assert.equal((await reader('GET', '/branding/texts')).status, 200);
    expectError(await reader('PUT', '/branding/texts', {}), 403, 'insufficient_scope');
    const org = (await api('POST', '/organizations', { name: 'Branded' })).json().id as string;
    const orgKey = await mint(org, ['branding:read', 'branding:write']);
    expectError(await orgKey('GET', '/branding/texts'), 403, 'forbidden');
  });
});
