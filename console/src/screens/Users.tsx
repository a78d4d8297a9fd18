import { type FormEvent, useState } from 'react';
import { api, type Page, type Passkey, query, type User } from '../api';
import { ConfirmButton, Empty, ErrorNote, Field, Loading, useLoad, when } from '../ui';

export function Users() {
  const [email, setEmail] = useState('');
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after[after.length - 1];
  const list = useLoad(() => api<Page<User>>('GET', `/users${query({ limit: 50, after: cursor, email })}`), [cursor, email]);
  const [selected, setSelected] = useState<string>();
  const [error, setError] = useState<unknown>();

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const name = String(data.get('name') ?? '').trim();
    const password = String(data.get('password') ?? '');
    setError(undefined);
    try {
      const u = await api<User>('POST', '/users', { email: data.get('email'), ...(name ? { name } : {}), ...(password ? { password } : {}) });
      form.reset();
      setSelected(u.id);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const search = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setAfter([]);
    setEmail(String(new FormData(e.currentTarget).get('q') ?? '').trim());
  };

  return (
    <div className="columns">
      <section aria-labelledby="user-list">
        <h2 id="user-list">All users</h2>
        <form className="card" onSubmit={create} aria-labelledby="user-new">
          <h3 id="user-new">New user</h3>
          <Field id="user-email" label="Email">
            <input id="user-email" name="email" type="email" required />
          </Field>
          <Field id="user-name" label="Name (optional)">
            <input id="user-name" name="name" maxLength={200} />
          </Field>
          <Field id="user-password" label="Password (optional, 8 characters or more)">
            <input id="user-password" name="password" type="password" autoComplete="new-password" />
          </Field>
          <ErrorNote error={error} />
          <button type="submit" className="primary">
            Create user
          </button>
        </form>
        <form className="row" onSubmit={search} role="search">
          <label htmlFor="user-search" className="visually-hidden">
            Find a user by email
          </label>
          <input id="user-search" name="q" type="search" placeholder="Exact email" />
          <button type="submit">Find</button>
        </form>
        {list.loading ? <Loading what="users" /> : null}
        <ErrorNote error={list.error} />
        {list.data && list.data.data.length === 0 ? <Empty>{email ? `No user with the email ${email}.` : 'No users yet.'}</Empty> : null}
        <ul className="pick">
          {(list.data?.data ?? []).map((u) => (
            <li key={u.id}>
              <button type="button" aria-pressed={u.id === selected} onClick={() => setSelected(u.id)}>
                <strong>{u.email}</strong> <span className="muted">{u.name ?? ''}</span>
              </button>
            </li>
          ))}
        </ul>
        <div className="pager">
          {after.length > 0 ? (
            <button type="button" onClick={() => setAfter(after.slice(0, -1))}>
              Previous page
            </button>
          ) : null}
          {list.data?.has_more && list.data.next_cursor ? (
            <button type="button" onClick={() => setAfter([...after, list.data!.next_cursor!])}>
              Next page
            </button>
          ) : null}
        </div>
      </section>
      {selected ? (
        <UserDetail
          key={selected}
          id={selected}
          onDeleted={() => {
            setSelected(undefined);
            list.reload();
          }}
        />
      ) : null}
    </div>
  );
}

function UserDetail({ id, onDeleted }: { id: string; onDeleted: () => void }) {
  const user = useLoad(() => api<User>('GET', `/users/${id}`), [id]);
  const passkeys = useLoad(() => api<Page<Passkey>>('GET', `/users/${id}/passkeys?limit=100`), [id]);
  const [note, setNote] = useState('');
  if (user.loading && !user.data) return <Loading what="the user" />;
  if (user.error) return <ErrorNote error={user.error} />;
  const u = user.data!;
  return (
    <section aria-labelledby="user-detail" className="detail">
      <h2 id="user-detail">{u.email}</h2>
      <p className="muted">
        <code>{u.id}</code> · created {when(u.created_at)} · {u.has_password ? 'has a password' : 'no password'} · email {u.email_verified ? 'verified' : 'not verified'}
      </p>
      <div className="card">
        <h3>Sessions</h3>
        <p>Signing the user out ends every browser session at once.</p>
        <ConfirmButton
          label="Sign out everywhere"
          question={`End every session of ${u.email}?`}
          confirmLabel="Yes, sign out"
          onConfirm={async () => {
            await api('DELETE', `/users/${u.id}/sessions`);
            setNote('Every session was ended.');
          }}
        />
        <p role="status" className="muted">
          {note}
        </p>
      </div>
      <div className="card">
        <h3>Passkeys</h3>
        {passkeys.loading ? <Loading what="passkeys" /> : null}
        <ErrorNote error={passkeys.error} />
        {passkeys.data && passkeys.data.data.length === 0 ? <Empty>No passkeys.</Empty> : null}
        <ul className="pick">
          {(passkeys.data?.data ?? []).map((p) => (
            <li key={p.id}>
              <span>
                {p.name ?? 'Passkey'} <span className="muted">created {when(p.created_at)}, last used {when(p.last_used_at)}</span>
              </span>
              <ConfirmButton
                label="Remove"
                question="Remove this passkey?"
                confirmLabel="Yes, remove"
                onConfirm={async () => {
                  await api('DELETE', `/users/${u.id}/passkeys/${p.id}`);
                  passkeys.reload();
                }}
              />
            </li>
          ))}
        </ul>
      </div>
      <ConfirmButton
        label="Delete user"
        question={`Delete ${u.email} and their memberships?`}
        confirmLabel="Yes, delete"
        onConfirm={async () => {
          await api('DELETE', `/users/${u.id}`);
          onDeleted();
        }}
      />
    </section>
  );
}
