/**
 * The SDK's `verifyWebhook` against the test vectors of docs/webhooks.md (read from the page, and
 * checked against Keyhall's own signer so the page cannot drift from what Keyhall sends).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { verifyWebhook, WebhookVerificationError } from '../../packages/sdk/src/index.js';
import { computeSignature } from '../../src/webhooks/signer.js';

interface Vector {
  name: string;
  secret: string;
  'webhook-id': string;
  body: string;
  'webhook-signature': string;
}

const page = readFileSync(path.resolve(import.meta.dirname, '../../docs/webhooks.md'), 'utf8');
const vectors: Vector[] = [...page.matchAll(/<!-- webhook-vector: ([^\n]+) -->\n```text\n([\s\S]*?)```\n/g)].map((m) => ({
  name: m[1]!,
  ...(Object.fromEntries(
    m[2]!
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
  ) as Omit<Vector, 'name'>),
}));
const NOW = 1732240000 * 1000;

/** The reason a verification is refused with. */
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof WebhookVerificationError, String(err));
    return err.reason;
  }
  assert.fail('verified');
}

describe('sdk: verifyWebhook, the test vectors of docs/webhooks.md', () => {
  it('the page has its two vectors, and Keyhall signs them so', () => {
    assert.equal(vectors.length, 2);
    for (const v of vectors) {
      const v1 = computeSignature(v.secret, v.body, 1732240000);
      assert.ok(v['webhook-signature'].split(',').includes(`v1=${v1}`), v.name);
    }
  });

  for (const v of vectors) {
    describe(v.name, () => {
      const headers = { 'webhook-id': v['webhook-id'], 'webhook-signature': v['webhook-signature'], 'content-type': 'application/json' };

      it('verifies (string body, bytes, Fetch Headers, a secret list) and returns the event and webhook-id', async () => {
        const now = () => NOW;
        const ok = await verifyWebhook(v.body, headers, v.secret, { now });
        assert.equal(ok.webhookId, v['webhook-id']);
        assert.equal(ok.timestamp, 1732240000);
        assert.deepEqual(ok.event, JSON.parse(v.body));
        assert.equal((await verifyWebhook(new TextEncoder().encode(v.body), new Headers(headers), v.secret, { now })).event.type, 'member.added');
        assert.equal((await verifyWebhook(v.body, headers, ['whsec_other', v.secret], { now })).webhookId, v['webhook-id']);
      });

      it('refuses a changed body, another secret, a moved timestamp, and a stale or future delivery', async () => {
        const now = () => NOW;
        assert.equal(await refusal(verifyWebhook(v.body.replace('member', 'admin'), headers, v.secret, { now })), 'no_matching_signature');
        assert.equal(await refusal(verifyWebhook(v.body, headers, 'whsec_other', { now })), 'no_matching_signature');
        const moved = { ...headers, 'webhook-signature': v['webhook-signature'].replace('t=1732240000', 't=1732240001') };
        assert.equal(await refusal(verifyWebhook(v.body, moved, v.secret, { now })), 'no_matching_signature');
        assert.equal(await refusal(verifyWebhook(v.body, headers, v.secret, { now: () => NOW + 301_000 })), 'timestamp_out_of_tolerance');
        assert.equal(await refusal(verifyWebhook(v.body, headers, v.secret, { now: () => NOW - 301_000 })), 'timestamp_out_of_tolerance');
        // The tolerance is the caller's: 301 s late passes with 600.
        assert.equal((await verifyWebhook(v.body, headers, v.secret, { now: () => NOW + 301_000, toleranceSeconds: 600 })).timestamp, 1732240000);
      });
    });
  }

  it('refuses malformed headers as Keyhall’s reference verifier does', async () => {
    const v = vectors[0]!;
    const sig = v['webhook-signature'];
    const now = () => NOW;
    for (const bad of [undefined, '', 'v1=' + sig.split('v1=')[1], 't=1732240000', `t=abc,${sig.split(',')[1]}`, `${sig},t=1732240000`, `${sig},garbage`]) {
      const headers = bad === undefined ? {} : { 'webhook-signature': bad };
      assert.equal(await refusal(verifyWebhook(v.body, headers, v.secret, { now })), 'malformed_header', String(bad));
    }
    // Unknown schemes are ignored, not refused.
    assert.equal((await verifyWebhook(v.body, { 'webhook-signature': `${sig},v0=abc` }, v.secret, { now })).timestamp, 1732240000);
  });
});
