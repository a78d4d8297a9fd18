/** docs/guides/first-token.md, run as written against `keyhall serve` (issue 27, item 11). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { Guide, type Keyhall, startKeyhall } from './guide.js';

describe('guide: your first token (client credentials)', () => {
  const guide = new Guide('first-token');
  let k: Keyhall;
  before(async () => {
    k = await startKeyhall();
    guide.addresses.set('localhost:3000', k.host);
  });
  after(() => k?.close());

  it('shows its code as it is', () => {
    assert.deepEqual(guide.assertFilesShown(), ['docs/guides/first-token/token.ts']);
  });

  it('registers a client, gets a token that verifies against the JWKS, introspects it, and does it again from code', async () => {
    const c = await guide.json('create-client', { KEYHALL_API_KEY: k.apiKey });
    assert.match(c.client_id, /^cli_/);
    assert.match(c.client_secret, /^cs_/);
    const creds = { CLIENT_ID: c.client_id, CLIENT_SECRET: c.client_secret };

    const jwks = createRemoteJWKSet(new URL(`${k.issuer}/.well-known/jwks.json`));
    const verify = (token: string) => jwtVerify(token, jwks, { issuer: k.issuer, audience: k.issuer, typ: 'at+jwt', algorithms: ['EdDSA'] });

    const t = await guide.json('token', creds);
    assert.deepEqual({ token_type: t.token_type, expires_in: t.expires_in, scope: t.scope }, { token_type: 'Bearer', expires_in: 600, scope: 'reports:read' });
    const { payload } = await verify(t.access_token);
    assert.deepEqual(
      { sub: payload.sub, client_id: payload.client_id, scope: payload.scope },
      { sub: c.client_id, client_id: c.client_id, scope: 'reports:read' },
    );

    const i = await guide.json('introspect', { ...creds, ACCESS_TOKEN: t.access_token });
    assert.deepEqual({ active: i.active, client_id: i.client_id, scope: i.scope }, { active: true, client_id: c.client_id, scope: 'reports:read' });

    assert.deepEqual(await guide.json('wrong-secret', creds), { error: 'invalid_client', error_description: 'client authentication failed' });

    const out = (await guide.sh('run-code', { ...creds, KEYHALL_ISSUER: k.issuer })).split('\n');
    assert.equal((await verify(out[0]!)).payload.sub, c.client_id);
    assert.equal(out[1], 'expires in 600 s, scope "reports:read"');
  });
});
