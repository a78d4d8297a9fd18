import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { basic } from '../oauth/helpers.js';
import { REDIRECT, type SigninTestServer, signIn, startSigninServer } from './helpers.js';

/** Security review 2, finding 2: a third-party client never gets a code without a stored consent. */
describe('third-party consent covers requests with no scope and the requested resources', () => {
  let s: SigninTestServer;
  let tp: { client_id: string; client_secret: string };
  let user: { id: string; email: string };
  before(async () => {
    s = await startSigninServer();
    user = await s.createUser('victim@example.com');
    tp = await s.webClient({ client_name: 'Third Party', allowed_resources: ['https://api.example/', 'https://other.example/'] });
    await s.clientSettings(tp.client_id, { thirdParty: true });
  });
  after(() => s.close());

  const authorize = (extra: Record<string, string> = {}) =>
    `/authorize?${new URLSearchParams({ client_id: tp.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 'x', ...extra })}`;

  it('asks for consent (or answers consent_required to prompt=none) when no scope or only resource= is requested', async () => {
    const b = s.browser();
    await signIn(b, '/login', user.email);
    const extras: Array<Record<string, string>> = [{}, { resource: 'https://api.example/' }];
    for (const extra of extras) {
      const r = await b.get(authorize(extra));
      assert.equal(r.status, 303, JSON.stringify(extra));
      assert.match(r.headers.location!, /^\/login\/consent\?flow=/, JSON.stringify(extra));
    }
    const silent = await b.get(authorize({ prompt: 'none' }));
    const params = new URL(silent.headers.location!).searchParams;
    assert.equal(params.get('error'), 'consent_required');
    assert.equal(params.get('code'), null);
  });

  it('remembers a consent with no scope, and asks again for a resource the user has not approved', async () => {
    const b = s.browser();
    await signIn(b, '/login', user.email);
    const toConsent = await b.get(authorize());
    const page = await b.get(toConsent.headers.location!);
    assert.match(page.text, /Third Party wants to access your account/);
    const allowed = await b.submit(page, { decision: 'allow' });
    assert.ok(new URL(allowed.headers.location!).searchParams.get('code'));
    assert.ok(new URL((await b.get(authorize({ prompt: 'none' }))).headers.location!).searchParams.get('code'), 'consent remembered');

    const silent = await b.get(authorize({ prompt: 'none', resource: 'https://api.example/' }));
    assert.equal(new URL(silent.headers.location!).searchParams.get('error'), 'consent_required', 'resource not yet approved');
    const asked = await b.get(authorize({ resource: 'https://api.example/' }));
    const resourcePage = await b.get(asked.headers.location!);
    assert.match(resourcePage.text, /https:\/\/api\.example\//);
    const ok = await b.submit(resourcePage, { decision: 'allow' });
    const code = new URL(ok.headers.location!).searchParams.get('code')!;
    const t = await s.post(
      '/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      { authorization: basic(tp.client_id, tp.client_secret) },
    );
    assert.equal(t.status, 200);

    assert.ok(new URL((await b.get(authorize({ prompt: 'none', resource: 'https://api.example/' }))).headers.location!).searchParams.get('code'));
    const other = await b.get(authorize({ prompt: 'none', resource: 'https://other.example/' }));
    assert.equal(new URL(other.headers.location!).searchParams.get('error'), 'consent_required');
  });
});
