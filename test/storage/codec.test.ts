import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bool, codec, computed, json, jsonOrNull, words } from '../../src/storage/codec.js';
import type { DirectoryUserRecord } from '../../src/storage/repos/directory-users.js';
import { currentPasswordSetBy, passwordTag } from '../../src/storage/repos/users.js';
import { client, openStorage, organization, type StorageDb, tenant, uid, user } from './helpers.js';

describe('storage codec', () => {
  interface Client {
    id: string;
    scopes: string[];
    grantTypes: string[];
    jwks: { keys: unknown[] } | null;
    dpopBound: boolean;
    hasSecret: boolean;
  }
  const clients = codec<Client>()('oauth_clients', {
    id: true,
    scopes: words.in('scope'),
    grantTypes: json<string[]>(),
    jwks: jsonOrNull<{ keys: unknown[] }>(),
    dpopBound: bool.in('dpop_bound_access_tokens'),
    hasSecret: computed((r) => r.secret_hash !== null),
  });
  const rec: Client = { id: 'cli_1', scopes: ['openid', 'email'], grantTypes: ['refresh_token'], jwks: null, dpopBound: true, hasSecret: true };

  it('derives the row: renamed columns, JSON text, 0/1 and space-separated lists; computed fields are not written', () => {
    assert.deepEqual(clients.toRow(rec), { id: 'cli_1', scope: 'openid email', grant_types: '["refresh_token"]', jwks: null, dpop_bound_access_tokens: 1 });
  });

  it('derives the record back from a row', () => {
    const row = { id: 'cli_1', scope: '', grant_types: '[]', jwks: '{"keys":[]}', dpop_bound_access_tokens: 0, secret_hash: null };
    assert.deepEqual(clients.toRecord(row as never), { id: 'cli_1', scopes: [], grantTypes: [], jwks: { keys: [] }, dpopBound: false, hasSecret: false });
  });

  it('derives a patch of the defined fields only, optionally of allowed fields only', () => {
    assert.deepEqual(clients.toPatch({ scopes: ['a'], jwks: null, dpopBound: undefined }), { scope: 'a', jwks: null });
    assert.deepEqual(clients.toPatch({ scopes: ['a'], grantTypes: ['x'] }, ['grantTypes']), { grant_types: '["x"]' });
    assert.deepEqual(clients.toPatch({ hasSecret: false }), {}, 'computed fields are never written');
  });
});

describe('storage codec: records round-trip through insert and find', () => {
  let s: StorageDb;
  let a: string;
  before(async () => {
    s = await openStorage();
    a = await tenant(s.r);
  });
  after(() => s.close());

  it('OAuth clients: JSON arrays and objects, booleans, space-separated scopes, nulls', async () => {
    const full = await client(s.r, a, {
      clientName: 'Ünïcode “app”',
      secretHash: 'ab'.repeat(32),
      authMethod: 'client_secret_basic',
      grantTypes: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'offline_access'],
      allowedResources: ['https://api.example/'],
      jwks: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'abc' }] },
      dpopBound: true,
      tokenExchange: { subject_clients: ['*'], audiences: ['https://api.example/'] },
      secretRotatedAt: 123,
    });
    const bare = await client(s.r, a, { scopes: [], grantTypes: [], redirectUris: [] });
    assert.deepEqual(await s.r.oauthClients.find(a, full.id), full);
    assert.deepEqual(await s.r.oauthClients.find(a, bare.id), bare);
    const updated = { ...full, dpopBound: false, jwks: null, tokenExchange: null, scopes: ['openid'], updatedAt: 9 };
    assert.equal(await s.r.oauthClients.update(updated), true);
    assert.deepEqual(await s.r.oauthClients.find(a, full.id), updated);
  });

  it('organizations and users: nullable JSON, booleans, patches', async () => {
    const listed = await organization(s.r, a, { slug: 'acme', webauthnAaguidAllowlist: ['aaguid-1', 'aaguid-2'], brandPrimaryColor: '#112233' });
    const open = await organization(s.r, a);
    assert.deepEqual(await s.r.organizations.find(a, listed.id), listed);
    assert.deepEqual(await s.r.organizations.find(a, open.id), open);
    const patched = await s.r.organizations.update(a, listed.id, { name: 'Acme 2', slug: null, domain: undefined }, 50);
    assert.deepEqual(patched, { ...listed, name: 'Acme 2', slug: null, updatedAt: 50 });

    const setBy = { type: 'api_key' as const, id: 'key_1', every_permission: false, hash_tag: passwordTag('$argon2id$x') };
    const verified = await user(s.r, a, { emailVerified: true, name: 'Ann', passwordHash: '$argon2id$x', passwordSetBy: setBy });
    const plain = await user(s.r, a);
    assert.deepEqual(await s.r.users.find(a, verified.id), verified);
    assert.deepEqual(await s.r.users.find(a, plain.id), plain);
    assert.deepEqual(await s.r.users.update(a, plain.id, { name: 'Bob' }, 60), { ...plain, name: 'Bob', updatedAt: 60 });
    // Metadata: JSON objects, NULL (read as {}) for none.
    const meta = { metadata: { team: { name: 'Core' } }, privateMetadata: { no: 7 } };
    assert.deepEqual(await s.r.users.update(a, plain.id, meta, 61), { ...plain, ...meta, name: 'Bob', updatedAt: 61 });
    assert.deepEqual(await s.r.users.update(a, plain.id, { metadata: {} }, 62), { ...plain, ...meta, metadata: {}, name: 'Bob', updatedAt: 62 });
    assert.deepEqual(await s.r.users.update(a, plain.id, { privateMetadata: {} }, 63), { ...plain, name: 'Bob', updatedAt: 63 });
    const bySystem = { type: 'system' as const, id: null, every_permission: true, hash_tag: passwordTag('$argon2id$y') };
    assert.deepEqual(await s.r.users.update(a, verified.id, { passwordHash: '$argon2id$y', passwordSetBy: bySystem }, 70), {
      ...verified,
      passwordHash: '$argon2id$y',
      passwordSetBy: bySystem,
      updatedAt: 70,
    });
    // The record describes the hash it was made for, and no other.
    assert.deepEqual(currentPasswordSetBy({ passwordHash: '$argon2id$y', passwordSetBy: bySystem }), bySystem);
    assert.equal(currentPasswordSetBy({ passwordHash: '$argon2id$z', passwordSetBy: bySystem }), null);
    assert.equal(currentPasswordSetBy({ passwordHash: null, passwordSetBy: bySystem }), null);
  });

  it('directory connections and users: JSON objects, computed fields, booleans, versions', async () => {
    const org = await organization(s.r, a);
    const conn = {
      id: uid('dir'),
      tenantId: a,
      organizationId: org.id,
      name: 'Okta',
      groupRoles: { admins: 'admin' },
      rateLimitPerMinute: 600,
      hasToken: false,
      tokenCreatedAt: null,
      createdAt: 1,
      updatedAt: 1,
    };
    await s.r.directoryConnections.insert(conn);
    assert.deepEqual(await s.r.directoryConnections.find(a, org.id, conn.id), conn);
    assert.equal(await s.r.directoryConnections.setToken(a, org.id, conn.id, 'cd'.repeat(32), 7), true);
    assert.deepEqual(await s.r.directoryConnections.find(a, org.id, conn.id), { ...conn, hasToken: true, tokenCreatedAt: 7, updatedAt: 7 });
    const renamed = await s.r.directoryConnections.update(a, org.id, conn.id, { groupRoles: { staff: 'member' } }, 8);
    assert.deepEqual(renamed?.groupRoles, { staff: 'member' });
    assert.equal(renamed?.name, 'Okta');

    const u = await user(s.r, a);
    const du: DirectoryUserRecord = {
      id: uid('dsu'),
      tenantId: a,
      connectionId: conn.id,
      organizationId: org.id,
      userId: u.id,
      ownsUser: true,
      userName: 'Ann@Example.com',
      externalId: null,
      displayName: 'Ann',
      givenName: null,
      familyName: 'Smith',
      email: 'ann@example.com',
      emailType: 'work',
      active: false,
      resource: {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        name: { familyName: 'Smith' },
        emails: [{ value: 'ann@example.com', primary: true }],
      },
      version: 1,
      createdAt: 1,
      updatedAt: 1,
    };
    await s.r.directoryUsers.insert(du);
    assert.deepEqual(await s.r.directoryUsers.find(conn.id, du.id), du);
    const next = await s.r.directoryUsers.replace({ ...du, active: true, externalId: 'ext-1' }, 9);
    assert.deepEqual(next, { ...du, active: true, externalId: 'ext-1', version: 2, updatedAt: 9 });
    assert.equal(await s.r.directoryUsers.replace({ ...du, active: true }, 10), undefined, 'a stale version does not write');
  });

  it('sign-in client settings, consents and events', async () => {
    const c = await client(s.r, a);
    const settings = {
      thirdParty: true,
      requirePar: false,
      idTokenAlg: 'EdDSA' as const,
      postLogoutRedirectUris: ['https://app.example/bye'],
      backchannelLogoutUri: 'https://app.example/backchannel',
      backchannelLogoutSessionRequired: true,
      requireSignedRequestObject: true,
      profile: 'fapi2' as const,
      claims: [{ claim: 'department', from: 'metadata.department', tokens: ['id_token' as const, 'userinfo' as const] }],
    };
    await s.r.signinStore.saveClientSettings(a, c.id, settings, 1);
    assert.deepEqual(await s.r.signinStore.clientSettings(a, c.id), settings);
    const none = { ...settings, requireSignedRequestObject: false, profile: null, claims: [] };
    await s.r.signinStore.saveClientSettings(a, c.id, none, 2);
    assert.deepEqual(await s.r.signinStore.clientSettings(a, c.id), none);

    const u = await user(s.r, a);
    await s.r.consents.grant(a, u.id, c.id, ['openid'], [], 1);
    await s.r.consents.grant(a, u.id, c.id, ['email', 'openid'], ['https://api.example/'], 2);
    assert.deepEqual(await s.r.signinStore.consent(a, u.id, c.id), { scopes: ['openid', 'email'], resources: ['https://api.example/'] });

    const e = await s.db.kysely.transaction().execute((trx) =>
      s.r.events.append(trx, {
        id: uid('evt'),
        tenantId: a,
        type: 'user.created',
        organizationId: null,
        actorType: 'api_key',
        actorId: null,
        data: { user_id: u.id, n: 1, ok: true, nothing: null },
        createdAt: 3,
      }),
    );
    assert.ok(e.seq >= 1);
    assert.deepEqual((await s.r.events.list({ tenantId: a, afterSeq: e.seq - 1, limit: 10 }))[0], e);
  });
});
