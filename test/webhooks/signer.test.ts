import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { describe, it } from 'node:test';
import { computeSignature, newWebhookSecret, signWebhook, verifyWebhookSignature, webhookHeaders } from '../../src/webhooks/signer.js';

/** An independent HMAC (WebCrypto, not node:crypto's createHmac) to check our signer against. */
async function webCryptoHex(secret: string, message: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await webcrypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await webcrypto.subtle.sign('HMAC', key, enc.encode(message));
  return Buffer.from(mac).toString('hex');
}

const body = JSON.stringify({ id: 'evt_01', type: 'member.added', created: 1_700_000_000, organization_id: 'org_1', data: { é: '✓' } });

describe('newWebhookSecret', () => {
  it('is whsec_ + base64url of 32 random bytes', () => {
    const a = newWebhookSecret();
    const b = newWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(a.slice('whsec_'.length), 'base64url').length, 32);
    assert.notEqual(a, b);
  });
});

describe('signWebhook', () => {
  it('produces t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>, matching an independent HMAC', async () => {
    const secret = newWebhookSecret();
    const header = signWebhook(secret, body, 1_700_000_123);
    const expected = await webCryptoHex(secret, `1700000123.${body}`);
    assert.equal(header, `t=1700000123,v1=${expected}`);
  });

  it('keys the HMAC with the whole secret string (prefix included) and signs UTF-8 bytes', async () => {
    const secret = 'whsec_test';
    assert.equal(computeSignature(secret, body, 5), await webCryptoHex('whsec_test', `5.${body}`));
    assert.equal(computeSignature(secret, Buffer.from(body, 'utf8'), 5), computeSignature(secret, body, 5));
  });

  it('a fresh t changes the signature, the same t and body give the same one', () => {
    const secret = newWebhookSecret();
    assert.equal(signWebhook(secret, body, 10), signWebhook(secret, body, 10));
    assert.notEqual(signWebhook(secret, body, 10).split(',')[1], signWebhook(secret, body, 11).split(',')[1]);
  });

  it('emits one v1 per secret', () => {
    const header = signWebhook(['whsec_a', 'whsec_b'], body, 7);
    const parts = header.split(',');
    assert.equal(parts.length, 3);
    assert.equal(parts[1], `v1=${computeSignature('whsec_a', body, 7)}`);
    assert.equal(parts[2], `v1=${computeSignature('whsec_b', body, 7)}`);
  });

  it('refuses bad timestamps and an empty secret list', () => {
    assert.throws(() => signWebhook('whsec_a', body, -1), RangeError);
    assert.throws(() => signWebhook('whsec_a', body, 1.5), RangeError);
    assert.throws(() => signWebhook([], body, 1), RangeError);
  });

  it('webhookHeaders gives webhook-id, webhook-event and a signature with the current t', () => {
    const h = webhookHeaders({ deliveryId: 'whd_1', eventType: 'api_key.created', secret: 'whsec_x', body, nowSeconds: 42 });
    assert.deepEqual(Object.keys(h).sort(), ['webhook-event', 'webhook-id', 'webhook-signature']);
    assert.equal(h['webhook-id'], 'whd_1');
    assert.equal(h['webhook-event'], 'api_key.created');
    assert.equal(h['webhook-signature'], signWebhook('whsec_x', body, 42));
  });
});

describe('verifyWebhookSignature', () => {
  const secret = newWebhookSecret();
  const t = 1_700_000_000;
  const header = signWebhook(secret, body, t);

  it('accepts a valid signature on the raw body (string or bytes)', () => {
    assert.deepEqual(verifyWebhookSignature(secret, header, body, t), { ok: true, timestamp: t });
    assert.equal(verifyWebhookSignature(secret, header, Buffer.from(body), t).ok, true);
  });

  it('applies a 300 s tolerance either way by default, and a given one', () => {
    assert.equal(verifyWebhookSignature(secret, header, body, t + 300).ok, true);
    assert.equal(verifyWebhookSignature(secret, header, body, t - 300).ok, true);
    assert.deepEqual(verifyWebhookSignature(secret, header, body, t + 301), { ok: false, reason: 'timestamp_out_of_tolerance' });
    assert.deepEqual(verifyWebhookSignature(secret, header, body, t - 301), { ok: false, reason: 'timestamp_out_of_tolerance' });
    assert.equal(verifyWebhookSignature(secret, header, body, t + 10, 5).ok, false);
  });

  it('rejects another secret, a changed body, a re-serialised body and a moved timestamp', () => {
    const no = { ok: false, reason: 'no_matching_signature' };
    assert.deepEqual(verifyWebhookSignature(newWebhookSecret(), header, body, t), no);
    assert.deepEqual(verifyWebhookSignature(secret, header, body + ' ', t), no);
    assert.deepEqual(verifyWebhookSignature(secret, header, JSON.stringify(JSON.parse(body), null, 1), t), no);
    const moved = header.replace(`t=${t}`, `t=${t + 1}`);
    assert.deepEqual(verifyWebhookSignature(secret, moved, body, t), no);
  });

  it('accepts any of several v1 entries, and any of several secrets (rotation overlap)', () => {
    const old = newWebhookSecret();
    const both = signWebhook([old, secret], body, t);
    assert.equal(verifyWebhookSignature(secret, both, body, t).ok, true);
    assert.equal(verifyWebhookSignature(old, both, body, t).ok, true);
    const junkFirst = `t=${t},v1=${'0'.repeat(64)},v1=${computeSignature(secret, body, t)}`;
    assert.equal(verifyWebhookSignature(secret, junkFirst, body, t).ok, true);
    assert.equal(verifyWebhookSignature([old, secret], signWebhook(secret, body, t), body, t).ok, true);
    assert.equal(verifyWebhookSignature([old], signWebhook(secret, body, t), body, t).ok, false);
  });

  it('ignores unknown schemes and tolerates spaces', () => {
    const v1 = computeSignature(secret, body, t);
    assert.equal(verifyWebhookSignature(secret, `t=${t}, v0=abc, v1=${v1}`, body, t).ok, true);
  });

  it('rejects malformed headers', () => {
    const v1 = computeSignature(secret, body, t);
    for (const bad of [
      undefined,
      '',
      `v1=${v1}`,
      `t=${t}`,
      `t=${t},v0=${v1}`,
      `t=abc,v1=${v1}`,
      `t=-1,v1=${v1}`,
      `t=${t},t=${t},v1=${v1}`,
      `t=${t},v1=${v1.toUpperCase()}`,
      `t=${t},v1=${v1.slice(2)}`,
      `t=${t},garbage,v1=${v1}`,
      `t=${t},v1=${v1},${'x'.repeat(9000)}`,
    ]) {
      assert.deepEqual(verifyWebhookSignature(secret, bad, body, t), { ok: false, reason: 'malformed_header' }, String(bad));
    }
  });
});
