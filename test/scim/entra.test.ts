import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, type Directory, ENTERPRISE, eventsOf, GROUP, membersOf, PATCH, USER, verifyDomain } from './helpers.js';

/** The request shapes Microsoft Entra ID's provisioning service sends. */
describe('SCIM: an Entra ID-shaped provisioning sequence', () => {
  let s: TestServer;
  let d: Directory;
  before(async () => {
    s = await startTestServer();
    d = await createDirectory(s, { group_roles: { 'Org Admins': 'admin' } });
  });
  after(() => s.close());

  it('looks up, creates, patches attributes, deactivates, reactivates, syncs groups and deletes', async () => {
    const probe = await d.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "a9d6dfc1-5b2a-4c11-8e7e-5b1f7f4c2f8e"')}`);
    assert.equal(probe.json().totalResults, 0);
    const lookup = await d.scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "0a21f0f2-8d2a-4f8e-bf98-7b2e3f1c6a11"')}`);
    assert.equal(lookup.json().totalResults, 0);

    const created = await d.scim('POST', '/Users', {
      schemas: [USER, ENTERPRISE],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7b2e3f1c6a11',
      userName: 'Test_User_ab6490ee@contoso.com',
      active: true,
      displayName: 'Test User',
      emails: [{ primary: true, type: 'work', value: 'Test_User_ab6490ee@contoso.com' }],
      meta: { resourceType: 'User' },
      name: { formatted: 'Test User', familyName: 'User', givenName: 'Test' },
      title: 'Engineer',
      [ENTERPRISE]: { department: 'Research', manager: { value: 'mgr-1' } },
    });
    assert.equal(created.status, 201, created.text);
    const user = created.json();
    assert.deepEqual(user.schemas, [USER, ENTERPRISE]);
    assert.equal(user[ENTERPRISE].department, 'Research');
    const members = await membersOf(d.api, d.orgId);
    assert.equal(members.length, 1);
    assert.equal(members[0]?.user.email, 'test_user_ab6490ee@contoso.com');

    const byExternal = await d.scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "0a21f0f2-8d2a-4f8e-bf98-7b2e3f1c6a11"')}`);
    assert.equal(byExternal.json().Resources[0].id, user.id);

    const patched = await d.scim('PATCH', `/Users/${user.id}`, {
      schemas: [PATCH],
      Operations: [
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updated@contoso.com' },
        { op: 'Replace', path: 'name.familyName', value: 'Updated' },
        { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Engineering' },
        { op: 'Add', value: { 'name.givenName': 'Changed', title: 'Lead' } },
      ],
    });
    assert.equal(patched.status, 200, patched.text);
    const p = patched.json();
    assert.equal(p.emails[0].value, 'updated@contoso.com');
    assert.equal(p.name.familyName, 'Updated');
    assert.equal(p.name.givenName, 'Changed');
    assert.equal(p.title, 'Lead');
    assert.equal(p[ENTERPRISE].department, 'Engineering');
    assert.equal((await membersOf(d.api, d.orgId))[0]?.user.email, 'updated@contoso.com');
    const byEmail = await d.scim('GET', `/Users?filter=${encodeURIComponent('emails[type eq "work" and value eq "UPDATED@contoso.com"]')}`);
    assert.equal(byEmail.json().totalResults, 1);

    // Entra has sent booleans as strings.
    const off = await d.scim('PATCH', `/Users/${user.id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.json().active, false);
    assert.equal((await membersOf(d.api, d.orgId)).length, 0);
    const inactive = await d.scim('GET', `/Users?filter=${encodeURIComponent('active eq false')}`);
    assert.equal(inactive.json().totalResults, 1);
    const on = await d.scim('PATCH', `/Users/${user.id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: true }] });
    assert.equal(on.json().active, true);
    assert.equal((await membersOf(d.api, d.orgId)).length, 1);

    // Groups: create empty, look up by name without members, add and remove members (Entra's value-list remove), rename.
    const group = await d.scim('POST', '/Groups', { schemas: [GROUP], externalId: 'grp-ext-1', displayName: 'Org Admins', members: [] });
    assert.equal(group.status, 201, group.text);
    const gid = group.json().id;
    const byName = await d.scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "org admins"')}&excludedAttributes=members`);
    assert.equal(byName.json().totalResults, 1);
    assert.equal(byName.json().Resources[0].members, undefined);
    const add = await d.scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ value: user.id }] }] });
    assert.equal(add.status, 200, add.text);
    assert.equal((await membersOf(d.api, d.orgId))[0]?.role, 'admin');
    const withMember = await d.scim('GET', `/Groups?filter=${encodeURIComponent(`members.value eq "${user.id}"`)}`);
    assert.equal(withMember.json().totalResults, 1);
    const remove = await d.scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'Remove', path: 'members', value: [{ value: user.id }] }] });
    assert.deepEqual(remove.json().members, []);
    assert.equal((await membersOf(d.api, d.orgId))[0]?.role, 'member');
    const rename = await d.scim('PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Replace', path: 'displayName', value: 'Org Admins (renamed)' }],
    });
    assert.equal(rename.json().displayName, 'Org Admins (renamed)');

    assert.equal((await d.scim('DELETE', `/Users/${user.id}`)).status, 204);
    assert.equal((await membersOf(d.api, d.orgId)).length, 0);
    const groupAfter = await d.scim('GET', `/Groups/${gid}`);
    assert.equal(groupAfter.json().members.length, 0);

    const events = await eventsOf(d.api, d.orgId, 'member.added,member.removed,member.role_changed,directory.user.deleted');
    assert.deepEqual(
      events.map((e) => e.type),
      ['member.added', 'member.removed', 'member.added', 'member.role_changed', 'member.role_changed', 'member.removed', 'directory.user.deleted'],
    );
    assert.ok(events.every((e) => e.actor.type === 'scim' && e.actor.id === d.connectionId));
  });

  it("accepts Entra's adds through type filters that match no element yet, and string booleans in values", async () => {
    const u = (await d.scim('POST', '/Users', { schemas: [USER], userName: 'no.email@contoso.com', active: 'True' })).json();
    assert.equal(u.active, true);
    const r = await d.scim('PATCH', `/Users/${u.id}`, {
      schemas: [PATCH],
      Operations: [
        { op: 'Add', path: 'emails[type eq "work"].value', value: 'no.email@contoso.com' },
        { op: 'Add', path: 'addresses[type eq "work"].formatted', value: '1 Main St' },
        { op: 'Add', path: 'addresses[type eq "work"].locality', value: 'Redmond' },
        { op: 'Add', path: 'roles', value: [{ value: 'Reader', primary: 'False' }] },
      ],
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json().emails, [{ type: 'work', value: 'no.email@contoso.com' }]);
    assert.deepEqual(r.json().addresses, [{ type: 'work', formatted: '1 Main St', locality: 'Redmond' }]);
    assert.equal(r.json().roles[0].primary, false);
    const replaceMissing = await d.scim('PATCH', `/Users/${u.id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Replace', path: 'phoneNumbers[type eq "mobile"].value', value: '+1 555 0100' }],
    });
    assert.equal(replaceMissing.status, 400);
    assert.equal(replaceMissing.json().scimType, 'noTarget');
  });

  it('links a SCIM user to an existing tenant user by email without changing that user', async () => {
    // Linking an existing user needs the email in the organization's verified domain.
    await verifyDomain(d.api, d.orgId, 'contoso.com');
    const existing = await d.api('POST', '/users', { email: 'Existing@Contoso.com', name: 'Keep Me' });
    assert.equal(existing.status, 201, existing.text);
    const r = await d.scim('POST', '/Users', { schemas: [USER], userName: 'existing@contoso.com', displayName: 'Directory Name' });
    assert.equal(r.status, 201, r.text);
    const member = (await membersOf(d.api, d.orgId)).find((m) => m.user_id === existing.json().id);
    assert.ok(member);
    await d.scim('PATCH', `/Users/${r.json().id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Other' }] });
    assert.equal((await d.api('GET', `/users/${existing.json().id}`)).json().name, 'Keep Me');
    const created = await eventsOf(d.api, d.orgId, 'directory.user.created');
    assert.equal(created.at(-1)?.data.linked_existing_user, true);
  });
});
