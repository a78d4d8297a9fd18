import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';
import { holderKey, verifierFor, walletProcess } from './helpers.js';

async function until(fn: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('credentials on the quick start tenant (http://localhost:<port>, `keyhall serve` in its own process)', () => {
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let out = '';
  let issuer = '';
  let platformKey = '';
  let cleanup: () => Promise<void>;
  before(async () => {
    const install = await freshInstallation({ KEYHALL_LOG_LEVEL: 'warn' });
    cleanup = install.cleanup;
    child = spawnServer(['--port', '0'], install.env);
    exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => /API key\s+sk_live_\S+/.test(out) && /Serving 1 tenant/.test(out));
    issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(out)![1]!;
    platformKey = /API key\s+(sk_live_\S+)/.exec(out)![1]!;
  });
  after(async () => {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    await cleanup();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${issuer}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${platformKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await r.json()) as Record<string, unknown>;
    assert.ok(r.ok, JSON.stringify(json));
    return json;
  };

  it('a wallet receives a membership credential: the proof is addressed to the http issuer as configured', async () => {
    assert.match(issuer, /^http:\/\/localhost:\d+$/);
    const orgId = (await api('POST', '/organizations', { name: 'Quick start' })).id as string;
    const user = await api('POST', '/users', { email: 'ada@example.com', name: 'Ada' });
    await api('POST', `/organizations/${orgId}/members`, { user_id: user.id, role: 'admin' });
    const offer = await api('POST', `/organizations/${orgId}/credentials/offers`, {
      credential_configuration_id: 'OrganizationMembership',
      subject: { user_id: user.id },
      tx_code: { length: 6, input_mode: 'numeric' },
    });
    assert.equal((offer.credential_offer as { credential_issuer: string }).credential_issuer, issuer);

    const key = await holderKey('ES256');
    const res = await walletProcess(offer.credential_offer_link as string, offer.tx_code as string, key);
    assert.equal(res.ok, true, JSON.stringify(res));
    const credential = res.credentialResponse!.credentials[0]!.credential;
    const { sdjwt } = await verifierFor(issuer);
    const verified = await sdjwt.verify(credential);
    assert.equal(verified.payload.iss, issuer);
    assert.equal((verified.payload as Record<string, unknown>).email, 'ada@example.com');
    assert.deepEqual((verified.payload.cnf as { jwk: Record<string, unknown> }).jwk, { kty: 'EC', crv: 'P-256', x: key.publicJwk.x, y: key.publicJwk.y });
    const listed = (await api('GET', `/organizations/${orgId}/credentials`)).data as Array<{ subject: string; status: string }>;
    assert.deepEqual(
      listed.map((c) => [c.subject, c.status]),
      [[key.didJwk, 'valid']],
    );
  });
});
