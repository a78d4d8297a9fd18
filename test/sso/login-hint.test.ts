/**
 * The login page tells people to leave the password empty for single sign-on only when SSO can
 * route someone: some organization of the tenant has an enabled connection (docs/sso.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { oidcConnection, type SsoTestServer, startSsoServer } from './helpers.js';

const HINT = 'leave the password empty';

describe('the login page shows the SSO hint only when a connection exists', () => {
  let s: SsoTestServer;
  before(async () => {
    s = await startSsoServer();
  });
  after(() => s.close());

  const login = async (host = s.tenant.tenant.host) => {
    const r = await s.request({ path: '/login', host });
    assert.equal(r.status, 200);
    return r.text;
  };

  it('a tenant without any SSO connection: no hint, the password form only', async () => {
    const page = await login();
    assert.ok(!page.includes(HINT), 'no SSO hint');
    assert.ok(page.includes('id="password"'));
  });

  it('with an enabled connection in one organization: the hint; only in that tenant', async () => {
    const org = (await s.api('POST', '/organizations', { name: 'Acme' })).json().id;
    const conn = await oidcConnection(s, org);
    assert.ok((await login()).includes(HINT), 'the hint');
    assert.ok(!(await login(s.idp.tenant.host)).includes(HINT), 'not on another tenant');
    // Disabled, it routes nobody: no hint again.
    assert.equal((await s.api('PATCH', `/organizations/${org}/sso/connections/${conn.id}`, { enabled: false })).status, 200);
    assert.ok(!(await login()).includes(HINT), 'no hint with the connection disabled');
  });
});
