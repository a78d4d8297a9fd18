import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { expectError } from '../helpers/v1.js';
import { type SsoTestServer, startSsoServer } from './helpers.js';
import { startTestIdp, type TestIdp } from './saml-idp.js';

/** A local server answering every request with `body` (the IdP metadata URL in these tests). */
async function serve(body: string, status = 200): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((_req, res) => {
    res.statusCode = status;
    res.setHeader('content-type', 'application/samlmetadata+xml');
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/metadata`, close: () => server.close() };
}

describe('SAML connections: /v1/organizations/{orgId}/sso/connections with protocol saml', () => {
  let s: SsoTestServer;
  let idp: TestIdp;
  let org: string;
  const path = () => `/organizations/${org}/sso/connections`;
  before(async () => {
    s = await startSsoServer();
    idp = await startTestIdp();
    org = (await s.api('POST', '/organizations', { name: 'Acme', domain: 'acme.test' })).json().id;
  });
  after(() => s.close());

  it('imports IdP metadata as XML; the view shows the IdP, its certificates and the SP URLs; the SP metadata is served', async () => {
    const r = await s.api('POST', path(), {
      protocol: 'saml',
      name: 'Acme SAML',
      group_roles: { Admins: 'admin' },
      saml: { metadata_xml: idp.metadataXml, attributes: { groups: 'memberOf' } },
    });
    assert.equal(r.status, 201, r.text);
    const c = r.json();
    assert.equal(c.protocol, 'saml');
    assert.equal(c.oidc, undefined);
    assert.equal(c.saml.idp_entity_id, idp.entityId);
    assert.equal(c.saml.idp_sso_url, idp.ssoUrl);
    const der = idp.metadataXml.match(/<(?:ds:)?X509Certificate>([^<]+)</)![1]!.replace(/\s+/g, '');
    assert.deepEqual(
      c.saml.idp_certificates.map((x: { fingerprint_sha256: string }) => x.fingerprint_sha256),
      [new X509Certificate(Buffer.from(der, 'base64')).fingerprint256],
    );
    assert.equal(c.saml.metadata_url, null);
    assert.equal(c.saml.acs_url, `${s.issuer}/sso/saml/${c.id}/acs`);
    assert.equal(c.saml.sp_metadata_url, `${s.issuer}/sso/saml/${c.id}/metadata`);
    assert.equal(c.saml.sp_entity_id, c.saml.sp_metadata_url);
    assert.equal(c.saml.allow_signed_response, false);
    assert.deepEqual(c.saml.attributes, { email: 'email', name: 'name', groups: 'memberOf', email_verified: null });
    assert.deepEqual(c.group_roles, { admins: 'admin' });

    const md = await s.browser().get(`/sso/saml/${c.id}/metadata`);
    assert.equal(md.status, 200);
    assert.match(md.headers['content-type'] as string, /^application\/samlmetadata\+xml/);
    assert.match(md.text, new RegExp(`entityID="${c.saml.sp_entity_id}"`));
    assert.match(md.text, new RegExp(`Location="${c.saml.acs_url}"`));
    assert.match(md.text, /WantAssertionsSigned="true"/);
    assert.match(md.text, /HTTP-POST/);

    // A custom SP entity id, then back to the default.
    const p = await s.api('PATCH', `${path()}/${c.id}`, { saml: { sp_entity_id: 'urn:acme:keyhall', allow_signed_response: true } });
    assert.equal(p.status, 200, p.text);
    assert.equal(p.json().saml.sp_entity_id, 'urn:acme:keyhall');
    assert.equal(p.json().saml.allow_signed_response, true);
    assert.match((await s.browser().get(`/sso/saml/${c.id}/metadata`)).text, /entityID="urn:acme:keyhall"/);
    assert.equal((await s.api('PATCH', `${path()}/${c.id}`, { saml: { sp_entity_id: null } })).json().saml.sp_entity_id, c.saml.sp_metadata_url);

    const events = (await s.api('GET', `/events?organization_id=${org}&types=sso.connection.created,sso.connection.updated`))
      .json()
      .data.filter((e: { data: { connection_id: string } }) => e.data.connection_id === c.id);
    assert.deepEqual(events[0].data, { connection_id: c.id, protocol: 'saml', issuer: idp.entityId, enabled: true });
    assert.deepEqual(events[1].data.fields, ['saml.sp_entity_id', 'saml.allow_signed_response']);
  });

  it('imports IdP metadata from a URL through the egress policy, and again on PATCH', async () => {
    const other = await startTestIdp();
    const first = await serve(idp.metadataXml);
    const second = await serve(other.metadataXml);
    try {
      const r = await s.api('POST', path(), { protocol: 'saml', name: 'By URL', saml: { metadata_url: first.url } });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.json().saml.metadata_url, first.url);
      assert.equal(r.json().saml.idp_entity_id, idp.entityId);
      const p = await s.api('PATCH', `${path()}/${r.json().id}`, { saml: { metadata_url: second.url } });
      assert.equal(p.status, 200, p.text);
      assert.equal(p.json().saml.idp_entity_id, other.entityId);
      // Imported as XML again: no URL any more.
      const x = await s.api('PATCH', `${path()}/${r.json().id}`, { saml: { metadata_xml: idp.metadataXml } });
      assert.equal(x.json().saml.metadata_url, null);
      assert.equal(x.json().saml.idp_entity_id, idp.entityId);
    } finally {
      first.close();
      second.close();
    }
  });

  it('refuses bad metadata and bad fields with 400 invalid_request', async () => {
    const bad = async (body: unknown, pattern?: RegExp, method: 'POST' | 'PATCH' = 'POST', at = path()) => {
      const r = await s.api(method, at, body);
      expectError(r, 400, 'invalid_request');
      if (pattern) assert.match(r.json().error_description, pattern);
    };
    const saml = (fields: Record<string, unknown>) => ({ protocol: 'saml', name: 'x', saml: fields });
    const md = idp.metadataXml;
    await bad({ protocol: 'saml', name: 'x' });
    await bad(saml({}), /metadata_xml or metadata_url is required/);
    await bad(saml({ metadata_xml: md, metadata_url: 'https://idp.example/metadata' }), /not both/);
    await bad(saml({ metadata_xml: md, unknown: 1 }));
    await bad(saml({ metadata_xml: md, attributes: { email: '' } }));
    await bad(saml({ metadata_xml: md, attributes: { role: 'x' } }));
    await bad(saml({ metadata_xml: md, allow_signed_response: 'yes' }));
    await bad({ protocol: 'saml', name: 'x', saml: { metadata_xml: md }, oidc: { issuer: s.idpIssuer, client_id: 'x' } });
    await bad(saml({ metadata_xml: '' }));
    await bad(saml({ metadata_xml: 'not xml <' }), /^saml\.metadata_xml: not well-formed XML/);
    await bad(
      saml({ metadata_xml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${md}` }),
      /^saml\.metadata_xml: a DTD or entity declaration is not allowed/,
    );
    await bad(saml({ metadata_xml: `${md}<!--${'x'.repeat(300 * 1024)}-->` }), /^saml\.metadata_xml: larger than 262144 bytes/);
    await bad(
      saml({ metadata_xml: '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"><SPSSODescriptor/></EntityDescriptor>' }),
      /exactly one identity provider/,
    );
    await bad(saml({ metadata_xml: md.replace(/entityID="[^"]+"/, '') }), /no entityID/);
    await bad(saml({ metadata_xml: md.replace(/HTTP-Redirect/g, 'HTTP-Artifact') }), /HTTP-Redirect/);
    await bad(saml({ metadata_xml: md.replace(/<(ds:)?X509Certificate>[^<]+</g, '<$1X509Certificate>bm90IGEgY2VydA==<') }), /not a valid X.509 certificate/);
    await bad(saml({ metadata_xml: md.replace(/<(ds:)?X509Certificate>[^<]+</g, '<$1X509Certificate><') }), /no signing certificate/);
    // URLs go through the egress policy, and what they answer is checked like XML.
    await bad(saml({ metadata_url: 'not a url' }), /^saml\.metadata_url: /);
    await bad(saml({ metadata_url: 'https://169.254.169.254/metadata' }), /^saml\.metadata_url: destination address is not allowed/);
    await bad(saml({ metadata_url: 'http://127.0.0.1:1/metadata' }), /^saml\.metadata_url: the metadata could not be fetched/);
    const missing = await serve('nope', 404);
    const huge = await serve(`${md}<!--${'x'.repeat(300 * 1024)}-->`);
    const junk = await serve('<html>hello</html>');
    try {
      await bad(saml({ metadata_url: missing.url }), /answered 404/);
      await bad(saml({ metadata_url: huge.url }), /exceeds 262144 bytes/);
      await bad(saml({ metadata_url: junk.url }), /exactly one identity provider/);
    } finally {
      missing.close();
      huge.close();
      junk.close();
    }
    // A SAML connection takes no OIDC settings, and the other way round.
    const c = (await s.api('POST', path(), saml({ metadata_xml: md }))).json();
    await bad({ oidc: { client_id: 'x' } }, /SAML connection/, 'PATCH', `${path()}/${c.id}`);
    await bad({ saml: { metadata_xml: 'not xml <' } }, /metadata_xml/, 'PATCH', `${path()}/${c.id}`);
    await bad({ saml: { sp_entity_id: '' } }, undefined, 'PATCH', `${path()}/${c.id}`);
    const o = await s.api('POST', path(), { protocol: 'oidc', name: 'OIDC', oidc: { issuer: s.idpIssuer, client_id: 'x', client_secret: 'a-secret-value' } });
    assert.equal(o.status, 201, o.text);
    await bad({ saml: { metadata_xml: md } }, /OIDC connection/, 'PATCH', `${path()}/${o.json().id}`);
    // The OIDC connection serves no SAML metadata.
    assert.equal((await s.browser().get(`/sso/saml/${o.json().id}/metadata`)).status, 404);
  });
});
