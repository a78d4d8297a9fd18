import { api, ApiError, type Member, type Page, type User } from '../api';
import { useSubmit } from '../components/forms';
import { Loaded } from '../components/lists';
import { ConfirmButton, ErrorNote, Field, useLoad } from '../ui';

const ROLES = ['member', 'admin'];

/** An organization's members: add an existing user by email, change roles, remove. */
export function Members({ org }: { org: string }) {
  const list = useLoad(() => api<Page<Member>>('GET', `/organizations/${org}/members?limit=100`), [org]);
  // Adding a member and changing a role share one error line (below the form).
  const edit = useSubmit(
    async (data) => {
      const email = String(data.get('email') ?? '').trim();
      const found = await api<Page<User>>('GET', `/users?email=${encodeURIComponent(email)}&limit=1`);
      const user = found.data[0];
      if (!user) throw new ApiError(404, 'not_found', `No user with the email ${email}: create the user first (Users).`);
      await api('POST', `/organizations/${org}/members`, { user_id: user.id, role: data.get('role') });
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
                      await api('PATCH', `/organizations/${org}/members/${m.user_id}`, { role: e.target.value });
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
                    await api('DELETE', `/organizations/${org}/members/${m.user_id}`);
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
      {ROLES.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </>
  );
}
