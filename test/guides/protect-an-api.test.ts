/** docs/guides/protect-an-api.md, run as written against `keyhall serve` (issue 27, item 11). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader, decodeJwt } from 'jose';
import { freePort, Guide, type Keyhall, type Running, startKeyhall } from './guide.js';

/** The status line, the challenge and the body of `curl -i`'s output. */
function response(out: string): { status: number; challenge: string | undefined; body: unknown } {
  const [head, body] = out.split(/\r\n\r\n/);
  return {
    status: Number(/^HTTP\/1\.1 (\d+)/.exec(head!)?.[1]),
    challenge: /^www-authenticate: (.*)$/im.exec(head!)?.[1],
    body: JSON.parse(body!),
  };
}

describe('guide: protect an API (jose, RS256 or EdDSA per resource server)', () => {
  const guide = new Guide('protect-an-api');
  let k: Keyhall;
  let api: Running | undefined;
  before(async () => {
    k = await startKeyhall();
    guide.addresses.set('localhost:3000', k.host);
  });
  after(async () => {
    await api?.stop();
    await k?.close();
  });

  it('shows its code as it is', () => {
    assert.deepEqual(guide.assertFilesShown(), ['docs/guides/protect-an-api/api.ts']);
  });

  it('the API answers 401 without a token, 200 with an RS256 token for it, 401 for a token addressed elsewhere or signed otherwise', async () => {
    const env = { KEYHALL_API_KEY: k.apiKey };
    const rs = await guide.json('create-resource-server', env);
    assert.equal(rs.access_token_signing_alg, 'RS256');
    const c = await guide.json('create-client', env);
    const creds = { CLIENT_ID: c.client_id, CLIENT_SECRET: c.client_secret };

    const port = await freePort();
    guide.addresses.set('localhost:4000', `localhost:${port}`);
    api = guide.start('start-api', { KEYHALL_ISSUER: k.issuer, PORT: String(port) });
    await api.waitFor(/Reports API on http:\/\/localhost:\d+\/reports/);

    assert.deepEqual(response(await guide.sh('call-without-token', {})), { status: 401, challenge: 'Bearer', body: { error: 'token_required' } });

    const t = await guide.json('token', creds);
    assert.equal(decodeProtectedHeader(t.access_token).alg, 'RS256');
    assert.equal(decodeJwt(t.access_token).aud, 'https://reports.example.com');
    assert.deepEqual(JSON.parse(await guide.sh('call-with-token', { ...creds, ACCESS_TOKEN: t.access_token })), {
      reports: [{ id: 'r1', title: 'Daily sign-ups' }],
      caller: c.client_id,
    });

    const refused = { status: 401, challenge: 'Bearer error="invalid_token"', body: { error: 'invalid_token' } };
    assert.deepEqual(response(await guide.sh('call-with-other-token', creds)), refused);

    const patched = await guide.json('switch-to-eddsa', { ...env, RESOURCE_SERVER_ID: rs.id });
    assert.equal(patched.access_token_signing_alg, 'EdDSA');
    const eddsa = await guide.json('token', creds);
    assert.equal(decodeProtectedHeader(eddsa.access_token).alg, 'EdDSA');
    // The API pinned to RS256 refuses it until its `algorithms` say EdDSA.
    assert.deepEqual(JSON.parse(await guide.sh('call-with-token', { ACCESS_TOKEN: eddsa.access_token })), { error: 'invalid_token' });
  });
});
