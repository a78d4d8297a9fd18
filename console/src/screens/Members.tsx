import { type FormEvent, useState } from 'react';
import { api, ApiError, type Member, type Page, type User } from '../api';
import { ConfirmButton, Empty, ErrorNote, Field, Loading, useLoad } from '../ui';

const ROLES = ['member', 'admin'];

/** An organization's members: add an existing user by email, change roles, remove. */
export function Members({ org }: { org: string }) {
  const list = useLoad(() => api<Page<Member>>('GET', `/organizations/${org}/members?limit=100`), [org]);
  const [error, setError] = useState<unknown>();
  const add = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const email = String(data.get('email') ?? '').trim();
    setError(undefined);
    try {
      const found = await api<Page<User>>('GET', `/users?email=${encodeURIComponent(email)}&limit=1`);
      const user = found.data[0];
      if (!user) throw new ApiError(404, 'not_found', `No user with the email ${email}: create the user first (Users).`);
      await api('POST', `/organizations/${org}/members`, { user_id: user.id, role: data.get('role') });
      form.reset();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section className="card" aria-labelledby="members">
      <h3 id="members">Members</h3>
      {list.loading ? <Loading what="members" /> : null}
      <ErrorNote error={list.error} />
      {list.data && list.data.data.length === 0 ? <Empty>No members yet.</Empty> : null}
      <ul className="pick">
        {(list.data?.data ?? []).map((m) => (
          <li key={m.user_id}>
            <span className="grow">{m.user?.email ?? m.user_id}</span>
            <label htmlFor={`role-${m.user_id}`} className="visually-hidden">
              Role of {m.user?.email ?? m.user_id}
            </label>
            <select
              id={`role-${m.user_id}`}
              value={m.role}
              onChange={async (e) => {
                setError(undefined);
                try {
                  await api('PATCH', `/organizations/${org}/members/${m.user_id}`, { role: e.target.value });
                  list.reload();
                } catch (err) {
                  setError(err);
                }
              }}
            >
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
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
      <form onSubmit={add} className="filters">
        <Field id="member-email" label="Add a user by email">
          <input id="member-email" name="email" type="email" required />
        </Field>
        <Field id="member-role" label="Role">
          <select id="member-role" name="role" defaultValue="member">
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit">Add member</button>
      </form>
      <ErrorNote error={error} />
    </section>
  );
}
