import { useState } from 'react';
import { ApiError, call, client, type Item } from '../api';
import { useSubmit } from '../components/forms';
import { Loaded, LoadStatus } from '../components/lists';
import { type Role, RoleChecks, useRolesIn } from '../components/roles';
import { ConfirmButton, ErrorNote, Field, useLoad } from '../ui';

type Member = Item<'/organizations/{orgId}/members'>;

/** The ticked role keys of a form's RoleChecks. */
const tickedRoles = (data: FormData) => data.getAll('roles').map(String);

/** An organization's members: add an existing user by email with their roles, change a member's roles, remove. */
export function Members({ org }: { org: string }) {
  const list = useLoad(() => call(client.GET('/organizations/{orgId}/members', { params: { path: { orgId: org }, query: { limit: 100 } } })), [org]);
  const roles = useRolesIn(org);
  const add = useSubmit(
    async (data) => {
      const email = String(data.get('email') ?? '').trim();
      const found = await call(client.GET('/users', { params: { query: { email, limit: 1 } } }));
      const user = found.data[0];
      if (!user) throw new ApiError(404, 'not_found', `No user with the email ${email}: create the user first (Users).`);
      const picked = tickedRoles(data);
      // None ticked: the server gives the tenant's default role.
      await call(
        client.POST('/organizations/{orgId}/members', {
          params: { path: { orgId: org } },
          body: picked.length ? { user_id: user.id, roles: picked } : { user_id: user.id },
        }),
      );
      list.reload();
    },
    { reset: true },
  );
  return (
    <section className="card" aria-labelledby="members">
      <h3 id="members">Members</h3>
      <LoadStatus state={roles} what="roles" />
      <Loaded state={list} rows={list.data?.data} what="members" empty="No members yet.">
        {(rows) => (
          <ul className="pick">
            {rows.map((m) => (
              <MemberRow key={`${m.user_id} ${m.updated_at}`} org={org} member={m} roles={roles.data ?? []} onChanged={list.reload} />
            ))}
          </ul>
        )}
      </Loaded>
      <form onSubmit={add.onSubmit} aria-busy={add.busy} aria-labelledby="member-add">
        <h4 id="member-add">Add a member</h4>
        <Field id="member-email" label="Add a user by email">
          <input id="member-email" name="email" type="email" required />
        </Field>
        <RoleChecks id="member-roles" legend="Roles" roles={roles.data ?? []} hint="None ticked: the tenant's default role (Roles screen)." />
        <button type="submit">Add member</button>
        <ErrorNote error={add.error} />
      </form>
    </section>
  );
}

/** One member: their roles, changed in place (several may be ticked), and removal after confirmation. */
function MemberRow({ org, member: m, roles, onChanged }: { org: string; member: Member; roles: Role[]; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const who = m.user?.email ?? m.user_id;
  const save = useSubmit(async (data) => {
    const picked = tickedRoles(data);
    if (!picked.length) throw new Error('Tick at least one role.');
    await call(client.PATCH('/organizations/{orgId}/members/{userId}', { params: { path: { orgId: org, userId: m.user_id } }, body: { roles: picked } }));
    setEditing(false);
    onChanged();
  });
  return (
    <li data-member={m.user_id}>
      <span className="grow">
        {who} <span className="muted">· {m.roles.join(', ')}</span>
      </span>
      {editing ? (
        <form onSubmit={save.onSubmit} aria-busy={save.busy} aria-label={`Roles of ${who}`} className="grow">
          <RoleChecks id={`roles-${m.user_id}`} legend={`Roles of ${who}`} roles={roles} held={m.roles} />
          <button type="submit">Save roles</button>{' '}
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
          <ErrorNote error={save.error} />
        </form>
      ) : (
        <button type="button" onClick={() => setEditing(true)} aria-label={`Change roles of ${who}`}>
          Change roles
        </button>
      )}
      <ConfirmButton
        label="Remove"
        question={`Remove ${who} from the organization?`}
        confirmLabel="Yes, remove"
        onConfirm={async () => {
          await call(client.DELETE('/organizations/{orgId}/members/{userId}', { params: { path: { orgId: org, userId: m.user_id } } }));
          onChanged();
        }}
      />
    </li>
  );
}
