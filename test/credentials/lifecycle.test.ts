import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { fetchVia } from '../helpers/http.js';
import { ok, type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, v1 } from '../helpers/v1.js';
import { createDirectory, PATCH, USER } from '../scim/helpers.js';
import { holderKey, membershipOffer, type Org, orgWithMember, receiveCredential, verifierFor } from './helpers.js';

type Delivered = { type: string; organization_id: string; data: Record<string, unknown> };

async function issueTo(s: TestServer, o: Org) {
  const offer = await membershipOffer(o);
  const key = await holderKey();
  const { res } = await receiveCredential(s, offer.credential_offer_link, offer.tx_code, key);
  assert.equal(res.ok, true, JSON.stringify(res));
  const credential = (res as { credentialResponse: { credentials: Array<{ credential: string }> } }).credentialResponse.credentials[0]!.credential;
  const list = (await o.api('GET', `/organizations/${o.orgId}/credentials?limit=100`)).json().data as Array<Record<string, unknown>>;
  const record = list.find((c) => c.offer_id === offer.offer_id)!;
  return { credential, record, key };
}

describe('credential lifecycle: webhooks, status lists, membership revocation', () => {
  let s: TestServer;
  let rx: Receiver;
  before(async () => {
    s = await startTestServer({ tenantHost: 'issuer.test', config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 50 } });
    rx = await startReceiver(ok);
  });
  after(async () => {
    await rx.close();
    await s.close();
  });

  const delivered = (type: string) => rx.received.map((r) => JSON.parse(r.body) as Delivered).filter((e) => e.type === type);
  const until = async (pred: () => boolean) => {
    const end = Date.now() + 10_000;
    while (!pred()) {
      if (Date.now() > end) throw new Error('timed out waiting for a webhook');
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  it('delivers credential.issued and credential.revoked with the spec fields', async () => {
    const o = await orgWithMember(s);
    const hook = await o.api('POST', `/organizations/${o.orgId}/webhooks`, { url: rx.url, events: ['credential.issued', 'credential.revoked'] });
    assert.equal(hook.status, 201, hook.text);
    const { record, key } = await issueTo(s, o);
    await until(() => delivered('credential.issued').some((e) => e.data.vc_id === record.id));
    const issued = delivered('credential.issued').find((e) => e.data.vc_id === record.id)!;
    assert.deepEqual(issued.data, { vc_id: record.id, type: 'OrganizationMembership', format: 'dc+sd-jwt', subject: key.didJwk });
    assert.equal(issued.organization_id, o.orgId);

    const r = await o.api('POST', `/organizations/${o.orgId}/credentials/${record.id}/revoke`);
    assert.equal(r.status, 200, r.text);
    const again = await o.api('POST', `/organizations/${o.orgId}/credentials/${record.id}/revoke`);
    assert.equal(again.status, 200, 'revoking twice is idempotent');
    await until(() => delivered('credential.revoked').some((e) => e.data.vc_id === record.id));
    const revoked = delivered('credential.revoked').filter((e) => e.data.vc_id === record.id);
    const sl = record.status_list as { uri: string; idx: number };
    assert.deepEqual(revoked[0]!.data, {
      vc_id: record.id,
      type: 'OrganizationMembership',
      format: 'dc+sd-jwt',
      subject: key.didJwk,
      status_list_uri: sl.uri,
      index: sl.idx,
    });
    await new Promise((x) => setTimeout(x, 300));
    assert.equal(delivered('credential.revoked').filter((e) => e.data.vc_id === record.id).length, 1, 'one event: the second revoke changed nothing');
  });

  it('serves a compressed, signed status list of at least 16,384 entries, cached until a bit changes', async () => {
    const o = await orgWithMember(s);
    const { record } = await issueTo(s, o);
    const sl = record.status_list as { uri: string; idx: number };
    const path = new URL(sl.uri).pathname;
    const first = await s.request({ path });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers['content-type'], 'application/statuslist+jwt');
    const header = decodeProtectedHeader(first.text);
    assert.equal(header.typ, 'statuslist+jwt');
    assert.equal(header.alg, 'EdDSA');
    const claims = decodeJwt(first.text) as Record<string, unknown>;
    assert.equal(claims.sub, sl.uri);
    assert.equal(typeof claims.ttl, 'number');
    assert.equal(typeof claims.exp, 'number');
    assert.equal((claims.status_list as { bits: number }).bits, 1);
    const list = getListFromStatusListJWT(first.text);
    assert.ok(list.statusList.length >= 16_384);
    assert.equal(list.getStatus(sl.idx), 0);
    assert.equal((await s.request({ path })).text, first.text, 'cached: the same token while nothing changed');

    await o.api('POST', `/organizations/${o.orgId}/credentials/${record.id}/revoke`);
    const after = await s.request({ path });
    assert.notEqual(after.text, first.text, 're-signed after a bit changed');
    assert.equal(getListFromStatusListJWT(after.text).getStatus(sl.idx), 1);
    expectError(await s.request({ path: '/credentials/status/sl_00000000000000000000000000' }), 404, 'not_found');
  });

  it('allocates indexes at random across the list', async () => {
    const o = await orgWithMember(s);
    const idx: number[] = [];
    for (let i = 0; i < 4; i++) idx.push(((await issueTo(s, o)).record.status_list as { idx: number }).idx);
    const sorted = [...idx].sort((a, b) => a - b);
    assert.ok(new Set(idx).size === idx.length);
    assert.ok(!idx.every((x, i) => i === 0 || x === idx[i - 1]! + 1), `indexes are not sequential: ${sorted.join(',')}`);
  });

  it('revokes the membership credential when the member is removed through SCIM', async () => {
    const d = await createDirectory(s);
    const created = await d.scim('POST', '/Users', {
      schemas: [USER],
      userName: `scim-${Date.now()}@acme.example`,
      active: true,
      emails: [{ value: `scim-${Date.now()}@acme.example`, primary: true }],
    });
    assert.equal(created.status, 201, created.text);
    const members = (await d.api('GET', `/organizations/${d.orgId}/members`)).json().data as Array<{ user_id: string; user: { email: string } }>;
    const o: Org = { api: d.api, orgId: d.orgId, userId: members[0]!.user_id, email: members[0]!.user.email };
    const hook = await o.api('POST', `/organizations/${o.orgId}/webhooks`, { url: rx.url, events: ['credential.revoked'] });
    assert.equal(hook.status, 201, hook.text);
    const { credential, record } = await issueTo(s, o);
    const { sdjwt } = await verifierFor(s.tenant.tenant.issuer, fetchVia(s.port));
    await sdjwt.verify(credential);

    const off = await d.scim('PATCH', `/Users/${created.json().id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    assert.equal(off.status, 200, off.text);
    const now = await o.api('GET', `/organizations/${o.orgId}/credentials/${record.id}`);
    assert.equal(now.json().status, 'revoked');
    await assert.rejects(sdjwt.verify(credential), /Status is not valid/);
    await until(() => delivered('credential.revoked').some((e) => e.data.vc_id === record.id));
    const ev = (await o.api('GET', `/events?organization_id=${o.orgId}&types=credential.revoked`)).json().data as Array<{
      actor: { type: string };
      data: { vc_id: string };
    }>;
    assert.equal(ev.find((e) => e.data.vc_id === record.id)!.actor.type, 'scim');
  });

  it('revokes membership credentials when the member is removed through the API or the user is deleted', async () => {
    const o = await orgWithMember(s);
    const a = await issueTo(s, o);
    const pending = await membershipOffer(o);
    const rm = await o.api('DELETE', `/organizations/${o.orgId}/members/${o.userId}`);
    assert.equal(rm.status, 204, rm.text);
    assert.equal((await o.api('GET', `/organizations/${o.orgId}/credentials/${a.record.id}`)).json().status, 'revoked');
    const withdrawn = await s.request({ path: new URL(pending.credential_offer_uri).pathname });
    expectError(withdrawn, 404, 'not_found');

    const p = await orgWithMember(s);
    const b = await issueTo(s, p);
    assert.equal((await p.api('DELETE', `/users/${p.userId}`)).status, 204);
    assert.equal((await p.api('GET', `/organizations/${p.orgId}/credentials/${b.record.id}`)).json().status, 'revoked');
  });
});

describe('credential types and offers through /v1', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ tenantHost: 'issuer.test', config: { credentialOfferTtlSeconds: 120 } });
  });
  after(() => s.close());

  it('defines a type, offers it with claims, and lists the built-in first', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const t = await api('POST', '/credential_types', {
      id: 'EmployeeBadge',
      vct: 'https://acme.example/vct/badge',
      display_name: 'Employee badge',
      claims: { badge_no: { type: 'string', mandatory: true, display_name: 'Badge' }, floor: { type: 'number' } },
      lifetime_seconds: 86_400,
    });
    assert.equal(t.status, 201, t.text);
    expectError(
      await api('POST', '/credential_types', { ...t.json(), built_in: undefined, display_name: 'x', claims: { a: { type: 'string' } }, id: 'EmployeeBadge' }),
      409,
      'conflict',
    );
    expectError(
      await api('POST', '/credential_types', {
        id: 'OrganizationMembership',
        vct: 'x',
        display_name: 'x',
        claims: { a: { type: 'string' } },
        lifetime_seconds: 60,
      }),
      409,
      'conflict',
    );
    expectError(
      await api('POST', '/credential_types', { id: 'Bad', vct: 'x', display_name: 'x', claims: { iss: { type: 'string' } }, lifetime_seconds: 60 }),
      400,
      'invalid_request',
    );
    const types = (await api('GET', '/credential_types')).json().data as Array<{ id: string; built_in: boolean }>;
    assert.deepEqual(
      types.map((x) => [x.id, x.built_in]),
      [
        ['OrganizationMembership', true],
        ['EmployeeBadge', false],
      ],
    );
    const meta = (await s.request({ path: '/.well-known/openid-credential-issuer' })).json();
    assert.equal(meta.credential_issuer, s.tenant.tenant.issuer);
    assert.equal(meta.authorization_servers, undefined);
    const cfg = meta.credential_configurations_supported.EmployeeBadge;
    assert.equal(cfg.format, 'dc+sd-jwt');
    assert.deepEqual(cfg.cryptographic_binding_methods_supported, ['jwk', 'did:key', 'did:jwk']);
    assert.deepEqual(cfg.credential_metadata.claims[0], { path: ['badge_no'], mandatory: true, display: [{ name: 'Badge' }] });

    const orgId = (await api('POST', '/organizations', { name: 'Acme' })).json().id;
    expectError(
      await api('POST', `/organizations/${orgId}/credentials/offers`, { credential_configuration_id: 'EmployeeBadge', subject: { claims: { floor: 3 } } }),
      400,
      'invalid_request',
    );
    expectError(
      await api('POST', `/organizations/${orgId}/credentials/offers`, { credential_configuration_id: 'EmployeeBadge', subject: { claims: { badge_no: 7 } } }),
      400,
      'invalid_request',
    );
    expectError(
      await api('POST', `/organizations/${orgId}/credentials/offers`, { credential_configuration_id: 'Nope', subject: { claims: {} } }),
      400,
      'invalid_request',
    );
    expectError(
      await api('POST', `/organizations/${orgId}/credentials/offers`, { credential_configuration_id: 'OrganizationMembership', subject: { claims: {} } }),
      400,
      'invalid_request',
    );
    const offer = await api('POST', `/organizations/${orgId}/credentials/offers`, {
      credential_configuration_id: 'EmployeeBadge',
      subject: { claims: { badge_no: 'B-7', floor: 3 } },
    });
    assert.equal(offer.status, 201, offer.text);
    assert.equal(offer.json().tx_code, null);
    assert.equal(offer.json().expires_in, 120, 'KEYHALL_CREDENTIAL_OFFER_TTL_SECONDS');
    const key = await holderKey();
    const { res } = await receiveCredential(s, offer.json().credential_offer_link, null, key);
    assert.equal(res.ok, true, JSON.stringify(res));
    const credential = (res as { credentialResponse: { credentials: Array<{ credential: string }> } }).credentialResponse.credentials[0]!.credential;
    const { sdjwt } = await verifierFor(s.tenant.tenant.issuer, fetchVia(s.port));
    const v = await sdjwt.verify(credential);
    assert.equal(v.payload.vct, 'https://acme.example/vct/badge');
    assert.equal((v.payload as Record<string, unknown>).badge_no, 'B-7');

    expectError(await api('DELETE', '/credential_types/OrganizationMembership'), 400, 'invalid_request');
    assert.equal((await api('DELETE', '/credential_types/EmployeeBadge')).status, 204);
    expectError(await api('DELETE', '/credential_types/EmployeeBadge'), 404, 'not_found');
  });

  it('checks permissions: issue needs credentials:issue, revoke credentials:revoke, and org keys stay in their org', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const o = await orgWithMember(s, api);
    const other = (await api('POST', '/organizations', { name: 'Other' })).json().id;
    const mint = await api('POST', `/organizations/${o.orgId}/api_keys`, { name: 'reader', scopes: ['credentials:read'] });
    assert.equal(mint.status, 201, mint.text);
    const reader = v1(s, mint.json().key);
    expectError(
      await reader('POST', `/organizations/${o.orgId}/credentials/offers`, {
        credential_configuration_id: 'OrganizationMembership',
        subject: { user_id: o.userId },
      }),
      403,
      'insufficient_scope',
    );
    expectError(await reader('GET', `/organizations/${other}/credentials`), 403, 'forbidden');
    assert.equal((await reader('GET', `/organizations/${o.orgId}/credentials`)).status, 200);
    expectError(await reader('POST', `/organizations/${o.orgId}/credentials/vc_00000000000000000000000000/revoke`), 403, 'insufficient_scope');
    expectError(await api('POST', `/organizations/${o.orgId}/credentials/vc_00000000000000000000000000/revoke`), 404, 'not_found');
    expectError(await api('GET', `/organizations/${o.orgId}/credentials/nope`), 404, 'not_found');
    const outsider = (await api('POST', '/users', { email: 'outsider@acme.example' })).json().id;
    expectError(
      await api('POST', `/organizations/${o.orgId}/credentials/offers`, {
        credential_configuration_id: 'OrganizationMembership',
        subject: { user_id: outsider },
      }),
      400,
      'invalid_request',
    );
  });
});
