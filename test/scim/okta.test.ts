import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, type Directory, eventsOf, GROUP, membersOf, PATCH, USER } from './helpers.js';

/** The request sequence Okta's SCIM 2.0 provisioning sends (lifecycle and group push). */
describe('SCIM: an Okta-shaped provisioning sequence', () => {
  let s: TestServer;
  let d: Directory;
  before(async () => {
    s = await startTestServer();
    d = await createDirectory(s, { group_roles: { 'Keyhall Admins': 'admin' } });
  });
  after(() => s.close());

  it('looks up, creates, updates, deactivates, reactivates, pushes groups and deletes', async () => {
    const email = 'dade.murphy@example.com';
    const lookup = await d.scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}&startIndex=1&count=100`);
    assert.equal(lookup.status, 200, lookup.text);
    assert.match(String(lookup.headers['content-type']), /^application\/scim\+json/);
    assert.deepEqual(lookup.json(), {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });

    const created = await d.scim('POST', '/Users', {
      schemas: [USER],
      userName: email,
      name: { givenName: 'Dade', familyName: 'Murphy' },
      emails: [{ primary: true, value: email, type: 'work' }],
      displayName: 'Dade Murphy',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
      active: true,
    });
    assert.equal(created.status, 201, created.text);
    const user = created.json();
    assert.match(user.id, /^dsu_/);
    assert.equal(user.userName, email);
    assert.equal(user.active, true);
    assert.equal(user.password, undefined);
    assert.equal(created.headers.location, `http://127.0.0.1:${s.port}/scim/v2/Users/${user.id}`);
    assert.equal(created.headers.etag, 'W/"1"');

    const members = await membersOf(d.api, d.orgId);
    assert.equal(members.length, 1);
    assert.equal(members[0]?.user.email, email);
    assert.equal(members[0]?.user.name, 'Dade Murphy');
    assert.equal(members[0]?.role, 'member');
    const userId = members[0]?.user_id;

    const found = await d.scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "DADE.murphy@example.com"`)}`);
    assert.equal(found.json().totalResults, 1);
    assert.equal(found.json().Resources[0].id, user.id);
    assert.ok(!found.text.includes('1mz050nq'));

    const got = await d.scim('GET', `/Users/${user.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.json().name, { givenName: 'Dade', familyName: 'Murphy' });

    // Okta's profile update is a PUT of the whole user.
    const put = await d.scim('PUT', `/Users/${user.id}`, { ...user, name: { givenName: 'Dade', familyName: 'Zero Cool' }, displayName: 'Zero Cool' });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json().name.familyName, 'Zero Cool');
    assert.equal(put.headers.etag, 'W/"2"');
    assert.equal((await membersOf(d.api, d.orgId))[0]?.user.name, 'Zero Cool');

    const deactivate = await d.scim('PATCH', `/Users/${user.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    assert.equal(deactivate.status, 200, deactivate.text);
    assert.equal(deactivate.json().active, false);
    assert.equal((await membersOf(d.api, d.orgId)).length, 0);

    const reactivate = await d.scim('PATCH', `/Users/${user.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] });
    assert.equal(reactivate.json().active, true);
    assert.equal((await membersOf(d.api, d.orgId)).length, 1);

    // Group push: create with a member, rename, add/remove members, delete.
    const group = await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Keyhall Admins', members: [{ value: user.id, display: email }] });
    assert.equal(group.status, 201, group.text);
    const gid = group.json().id;
    assert.deepEqual(
      group.json().members.map((m: { value: string }) => m.value),
      [user.id],
    );
    assert.equal((await membersOf(d.api, d.orgId))[0]?.role, 'admin');
    const groupsOfUser = (await d.scim('GET', `/Users/${user.id}`)).json().groups;
    assert.deepEqual(
      groupsOfUser.map((g: { value: string }) => g.value),
      [gid],
    );

    const renamed = await d.scim('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', value: { id: gid, displayName: 'Engineering' } }],
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.json().displayName, 'Engineering');
    assert.equal((await membersOf(d.api, d.orgId))[0]?.role, 'member');

    const removeMember = await d.scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${user.id}"]` }] });
    assert.deepEqual(removeMember.json().members, []);
    const back = await d.scim('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [
        { op: 'replace', path: 'displayName', value: 'Keyhall Admins' },
        { op: 'add', path: 'members', value: [{ value: user.id, display: email }] },
      ],
    });
    assert.equal(back.json().members.length, 1);
    assert.equal((await membersOf(d.api, d.orgId))[0]?.role, 'admin');

    assert.equal((await d.scim('DELETE', `/Groups/${gid}`)).status, 204);
    assert.equal((await d.scim('GET', `/Groups/${gid}`)).status, 404);
    assert.equal((await membersOf(d.api, d.orgId))[0]?.role, 'member');

    assert.equal((await d.scim('DELETE', `/Users/${user.id}`)).status, 204);
    assert.equal((await d.scim('GET', `/Users/${user.id}`)).status, 404);
    assert.equal((await membersOf(d.api, d.orgId)).length, 0);
    assert.equal((await d.api('GET', `/users/${userId}`)).status, 200, 'the tenant user stays');

    const memberEvents = await eventsOf(d.api, d.orgId, 'member.added,member.removed,member.role_changed');
    assert.deepEqual(
      memberEvents.map((e) => `${e.type}:${e.data.role}`),
      [
        'member.added:member',
        'member.removed:member',
        'member.added:member',
        'member.role_changed:admin',
        'member.role_changed:member',
        'member.role_changed:admin',
        'member.role_changed:member',
        'member.removed:member',
      ],
    );
    const scimEvents = await eventsOf(
      d.api,
      d.orgId,
      'directory.user.created,directory.user.updated,directory.user.deactivated,directory.user.reactivated,directory.user.deleted,directory.group.created,directory.group.updated,directory.group.deleted',
    );
    assert.deepEqual(
      scimEvents.map((e) => e.type),
      [
        'directory.user.created',
        'directory.user.updated',
        'directory.user.deactivated',
        'directory.user.reactivated',
        'directory.group.created',
        'directory.group.updated',
        'directory.group.updated',
        'directory.group.updated',
        'directory.group.deleted',
        'directory.user.deleted',
      ],
    );
    for (const e of [...memberEvents, ...scimEvents]) assert.deepEqual(e.actor, { type: 'scim', id: d.connectionId });
    assert.deepEqual(scimEvents[1]?.data.fields, ['displayName', 'name']);
  });
});
