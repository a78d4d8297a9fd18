import { ApiError, call, client, MEMBER_ROLES } from '../api';
import { useSubmit } from '../components/forms';
import { Loaded } from '../components/lists';
import { ConfirmButton, ErrorNote, Field, useLoad } from '../ui';

type Role = (typeof MEMBER_ROLES)[number];

/** An organization's members: add an existing user by email, change roles, remove. */
export function Members({ org }: { org: string }) {
  const list = useLoad(() => call(client.GET('/organizations/{orgId}/members', { params: { path: { orgId: org }, query: { limit: 100 } } })), [org]);
  // Adding a member and changing a role share one error line (below the form).
  const edit = useSubmit(
    async (data) => {
      const email = String(data.get('email') ?? '').trim();
      const found = await call(client.GET('/users', { params: { query: { email, limit: 1 } } }));
      const user = found.data[0];
      if (!user) throw new ApiError(404, 'not_found', `No user with the email ${email}: create the user first (Users).`);
      await call(
        client.POST('/organizations/{orgId}/members', { params: { path: { orgId: org } }, body: { user_id: user.id, role: data.get('role') as Role } }),
      );
      list.reload();
    },
    { reset: true },
  );
  return (
    <section className="card" aria-labelledby="members">
      <h3 id="members">Members</h3>
      <Loaded state={list} rows={list.data?.data} what="members" empty="No members yet.">
        {(rows) => (
          <ul className="pick">
            {rows.map((m) => (
              <li key={m.user_id}>
                <span className="grow">{m.user?.email ?? m.user_id}</span>
                <label htmlFor={`role-${m.user_id}`} className="visually-hidden">
                  Role of {m.user?.email ?? m.user_id}
                </label>
                <select
                  id={`role-${m.user_id}`}
                  value={m.role}
                  onChange={(e) =>
                    edit.run(async () => {
                      await call(
                        client.PATCH('/organizations/{orgId}/members/{userId}', {
                          params: { path: { orgId: org, userId: m.user_id } },
                          body: { role: e.target.value as Role },
                        }),
                      );
                      list.reload();
                    })
                  }
                >
                  <RoleOptions />
                </select>
                <ConfirmButton
                  label="Remove"
                  question={`Remove ${m.user?.email ?? m.user_id} from the organization?`}
                  confirmLabel="Yes, remove"
                  onConfirm={async () => {
                    await call(client.DELETE('/organizations/{orgId}/members/{userId}', { params: { path: { orgId: org, userId: m.user_id } } }));
                    list.reload();
                  }}
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form onSubmit={edit.onSubmit} className="filters" aria-busy={edit.busy}>
        <Field id="member-email" label="Add a user by email">
          <input id="member-email" name="email" type="email" required />
        </Field>
        <Field id="member-role" label="Role">
          <select id="member-role" name="role" defaultValue="member">
            <RoleOptions />
          </select>
        </Field>
        <button type="submit">Add member</button>
      </form>
      <ErrorNote error={edit.error} />
    </section>
  );
}

function RoleOptions() {
  return (
    <>
      {MEMBER_ROLES.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </>
  );
}
