import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { basic, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

// RFC 6749 §3.2: the token endpoint takes application/x-www-form-urlencoded. Any other body is a
// client mistake answered like every other: 400 invalid_request, saying what the body must be.
describe('protocol endpoints refuse non-form bodies with 400 invalid_request', () => {
  let s: OAuthTestServer;
  let auth: string;
  before(async () => {
    s = await startOAuthServer();
    const c = await serviceClient(s);
    auth = basic(c.client_id, c.client_secret!);
  });
  after(() => s.close());

  const bodies: Array<[string | undefined, string]> = [
    ['application/json', '{"grant_type":"client_credentials"}'],
    ['application/json', '{"grant_type":'],
    ['text/plain', 'grant_type=client_credentials'],
    ['application/xml', '<grant_type>client_credentials</grant_type>'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nclient_credentials\r\n--x--\r\n'],
    ['application/x-www-form-urlencoded-but-not', 'grant_type=client_credentials'],
    [undefined, 'grant_type=client_credentials'],
  ];

  for (const path of ['/token', '/introspect', '/revoke', '/par']) {
    it(`${path}`, async () => {
      for (const [type, body] of bodies) {
        const r = await s.request({ method: 'POST', path, headers: { authorization: auth, ...(type ? { 'content-type': type } : {}) }, body });
        assert.equal(r.status, 400, `${path} ${type}: ${r.status} ${r.text}`);
        assert.equal(r.json().error, 'invalid_request', `${path} ${type}`);
        assert.match(r.json().error_description, /application\/x-www-form-urlencoded/, `${path} ${type}`);
      }
    });
  }
});
