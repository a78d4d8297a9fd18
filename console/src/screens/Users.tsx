import { type FormEvent, useState } from 'react';
import { call, client, type User } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { DataTable, Loaded, LoadedItem, Pager, PickList, useCursors } from '../components/lists';
import { ConfirmButton, Field, useLoad, when } from '../ui';

export function Users() {
  const [email, setEmail] = useState('');
  const cursors = useCursors();
  const list = useLoad(
    () => call(client.GET('/users', { params: { query: { limit: 50, after: cursors.after, email: email || undefined } } })),
    [cursors.after, email],
  );
  const [selected, setSelected] = useState<string>();

  const create = useSubmit(
    async (data) => {
      const name = String(data.get('name') ?? '').trim();
      const password = String(data.get('password') ?? '');
      const u = await call(
        client.POST('/users', { body: { email: String(data.get('email') ?? ''), ...(name ? { name } : {}), ...(password ? { password } : {}) } }),
      );
      setSelected(u.id);
      list.reload();
    },
    { reset: true },
  );
  const search = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    cursors.reset();
    setEmail(String(new FormData(e.currentTarget).get('q') ?? '').trim());
  };

  return (
    <div className="columns">
      <section aria-labelledby="user-list">
        <h2 id="user-list">All users</h2>
        <FormCard id="user-new" title="New user" heading="h3" submit="Create user" form={create}>
          <Field id="user-email" label="Email">
            <input id="user-email" name="email" type="email" required />
          </Field>
          <Field id="user-name" label="Name (optional)">
            <input id="user-name" name="name" maxLength={200} />
          </Field>
          <Field id="user-password" label="Password (optional, 8 characters or more)">
            <input id="user-password" name="password" type="password" autoComplete="new-password" />
          </Field>
        </FormCard>
        <form className="row" onSubmit={search} role="search">
          <label htmlFor="user-search" className="visually-hidden">
            Find a user by email
          </label>
          <input id="user-search" name="q" type="search" placeholder="Exact email" />
          <button type="submit">Find</button>
        </form>
        <Loaded state={list} rows={list.data?.data} what="users" empty={email ? `No user with the email ${email}.` : 'No users yet.'}>
          {(rows) => (
            <PickList rows={rows} rowKey={(u) => u.id} selected={selected} onPick={setSelected}>
              {(u) => (
                <>
                  <strong>{u.email}</strong> <span className="muted">{u.name ?? ''}</span>
                </>
              )}
            </PickList>
          )}
        </Loaded>
        <Pager cursors={cursors} page={list.data} />
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
  const user = useLoad(() => call(client.GET('/users/{userId}', { params: { path: { userId: id } } })), [id]);
  const passkeys = useLoad(() => call(client.GET('/users/{userId}/passkeys', { params: { path: { userId: id }, query: { limit: 100 } } })), [id]);
  return (
    <LoadedItem state={user} what="the user">
      {(u) => (
        <section aria-labelledby="user-detail" className="detail">
          <h2 id="user-detail">{u.email}</h2>
          <p className="muted">
            <code>{u.id}</code> · created {when(u.created_at)} · {u.has_password ? 'has a password' : 'no password'} · email{' '}
            {u.email_verified ? 'verified' : 'not verified'}
          </p>
          <Sessions user={u} />
          <div className="card">
            <h3>Passkeys</h3>
            <Loaded state={passkeys} rows={passkeys.data?.data} what="passkeys" empty="No passkeys.">
              {(rows) => (
                <ul className="pick">
                  {rows.map((p) => (
                    <li key={p.id}>
                      <span>
                        {p.name ?? 'Passkey'}{' '}
                        <span className="muted">
                          created {when(p.created_at)}, last used {when(p.last_used_at)}
                        </span>
                      </span>
                      <ConfirmButton
                        label="Remove"
                        question="Remove this passkey?"
                        confirmLabel="Yes, remove"
                        onConfirm={async () => {
                          await call(client.DELETE('/users/{userId}/passkeys/{passkeyId}', { params: { path: { userId: u.id, passkeyId: p.id } } }));
                          passkeys.reload();
                        }}
                      />
                    </li>
                  ))}
                </ul>
              )}
            </Loaded>
          </div>
          <ConfirmButton
            label="Delete user"
            question={`Delete ${u.email} and their memberships?`}
            confirmLabel="Yes, delete"
            onConfirm={async () => {
              await call(client.DELETE('/users/{userId}', { params: { path: { userId: u.id } } }));
              onDeleted();
            }}
          />
        </section>
      )}
    </LoadedItem>
  );
}

/** The user's live sessions, a page at a time: end one, or every one at once. */
function Sessions({ user }: { user: User }) {
  const cursors = useCursors();
  const sessions = useLoad(
    () => call(client.GET('/users/{userId}/sessions', { params: { path: { userId: user.id }, query: { limit: 20, after: cursors.after } } })),
    [user.id, cursors.after],
  );
  const [note, setNote] = useState('');
  // After an ending the list starts again from its first page (the one ended may have been alone on this one).
  const ended = (what: string) => {
    setNote(what);
    cursors.reset();
    sessions.reload();
  };
  return (
    <section className="card" aria-labelledby="user-sessions">
      <h3 id="user-sessions">Sessions</h3>
      <Loaded state={sessions} rows={sessions.data?.data} what="sessions" empty="No live sessions.">
        {(rows) => (
          <DataTable
            columns={['Signed in', 'Last seen', 'Expires (if unused)', 'Methods', 'Device', { hidden: 'Actions' }]}
            rows={rows}
            rowKey={(x) => x.id}
            rowProps={(x) => ({ 'data-session': x.id })}
          >
            {(x) => (
              <>
                <td>{when(x.created_at)}</td>
                <td>{when(x.last_seen_at)}</td>
                <td>{when(x.idle_expires_at < x.expires_at ? x.idle_expires_at : x.expires_at)}</td>
                <td>
                  <code>{x.amr.join(' ')}</code>
                  <br />
                  <span className="muted">acr {x.acr}</span>
                  {x.mfa_pending ? (
                    <>
                      {' '}
                      <span className="badge failed">second factor owed</span>
                    </>
                  ) : null}
                </td>
                <td>
                  {x.user_agent ?? 'Unknown browser'}
                  <br />
                  <span className="muted">{x.ip ?? 'no IP'}</span>
                </td>
                <td>
                  <ConfirmButton
                    label="End session"
                    question="End this session?"
                    confirmLabel="Yes, end it"
                    onConfirm={async () => {
                      await call(client.DELETE('/users/{userId}/sessions/{sessionId}', { params: { path: { userId: user.id, sessionId: x.id } } }));
                      ended('The session was ended.');
                    }}
                  />
                </td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <Pager cursors={cursors} page={sessions.data} />
      <p>Signing the user out ends every browser session at once and revokes their refresh tokens.</p>
      <ConfirmButton
        label="Sign out everywhere"
        question={`End every session of ${user.email}?`}
        confirmLabel="Yes, sign out"
        onConfirm={async () => {
          await call(client.DELETE('/users/{userId}/sessions', { params: { path: { userId: user.id } } }));
          ended('Every session was ended.');
        }}
      />
      <p role="status" className="muted">
        {note}
      </p>
    </section>
  );
}
