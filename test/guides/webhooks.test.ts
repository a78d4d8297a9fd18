/**
 * docs/guides/webhooks.md, run as written against `keyhall serve` (issue 27, item 11): the
 * loopback receiver is refused with an error that names KEYHALL_EGRESS_ALLOW, then, after the
 * restart the guide asks for, receives verified events.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, Guide, type Keyhall, type Running, startKeyhall } from './guide.js';

describe('guide: receive webhooks locally', () => {
  const guide = new Guide('webhooks');
  let k: Keyhall;
  let receiver: Running | undefined;
  before(async () => {
    k = await startKeyhall();
    guide.addresses.set('localhost:3000', k.host);
  });
  after(async () => {
    await receiver?.stop();
    await k?.close();
  });

  it('shows its code as it is', () => {
    assert.deepEqual(guide.assertFilesShown(), ['docs/guides/webhooks/receiver.ts']);
  });

  it('is refused with the hint, allowed after a restart with KEYHALL_EGRESS_ALLOW, and the receiver verifies a ping and member.added', async () => {
    const port = await freePort();
    guide.addresses.set('127.0.0.1:4242', `127.0.0.1:${port}`);
    const env: Record<string, string> = { KEYHALL_API_KEY: k.apiKey };
    env.ORG_ID = (await guide.json('create-organization', env)).id;

    const refused = await guide.json('register-endpoint', env);
    assert.equal(refused.error, 'invalid_request');
    assert.match(refused.error_description, /^url: destination address is not allowed: .*KEYHALL_EGRESS_ALLOW \(e\.g\. 127\.0\.0\.1\/32 .*docs\/webhooks\.md/);

    // The restart as the guide writes it: its settings, then `npm start`.
    const restart = /^((?:[A-Z_]+=\S+ )+)npm start\n$/.exec(guide.command('restart-keyhall'));
    assert.ok(restart, 'the restart step sets variables and runs npm start');
    const settings = Object.fromEntries(
      restart[1]!
        .trim()
        .split(' ')
        .map((kv) => kv.split('=') as [string, string]),
    );
    assert.deepEqual(settings, { KEYHALL_EGRESS_ALLOW: '127.0.0.1/32' });
    await k.restart(settings);

    const endpoint = await guide.json('register-endpoint', env);
    assert.match(endpoint.endpoint_id, /^we_/, JSON.stringify(endpoint));
    assert.equal(endpoint.url, `http://127.0.0.1:${port}/webhooks`);
    env.WEBHOOK_ID = endpoint.endpoint_id;

    receiver = guide.start('start-receiver', { WEBHOOK_SECRET: endpoint.secret, PORT: String(port) });
    await receiver.waitFor(/Receiving webhooks on http:\/\/127\.0\.0\.1:\d+\/webhooks/);

    const ping = await guide.json('ping', env);
    assert.equal(ping.status, 'pending');
    await receiver.waitFor(new RegExp(`verified ping ${ping.event_id}: \\{"endpoint_id":"${endpoint.endpoint_id}"\\}`));

    env.USER_ID = (await guide.json('create-user', env)).id;
    assert.equal((await guide.json('add-member', env)).user_id, env.USER_ID);
    await receiver.waitFor(
      new RegExp(`verified member\\.added evt_\\w+: \\{"organization_id":"${env.ORG_ID}","user_id":"${env.USER_ID}","role":"member","roles":\\["member"\\]\\}`),
    );
    assert.doesNotMatch(receiver.output(), /refused/);

    // The receiver prints before Keyhall records its answer: read the log until both are in.
    type Delivery = { event_type: string; status: string; attempts: Array<{ status_code: number }> };
    let log: Delivery[] = [];
    for (let i = 0; i < 50 && !(log.length === 2 && log.every((d) => d.status === 'delivered')); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 200));
      log = (await guide.json('deliveries', env)).data;
    }
    assert.deepEqual(log.map((d) => [d.event_type, d.status, d.attempts.map((a) => a.status_code)]).sort(), [
      ['member.added', 'delivered', [204]],
      ['ping', 'delivered', [204]],
    ]);
  });
});
