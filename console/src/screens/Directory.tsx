import { type FormEvent, useEffect, useState } from 'react';
import { allOrganizations, api, type Page } from '../api';
import { ConfirmButton, Empty, ErrorNote, Field, Loading, SecretOnce, useLoad, when } from '../ui';

interface Connection {
  id: string;
  name: string;
  group_roles: Record<string, string>;
  rate_limit_per_minute: number;
  has_token: boolean;
  token_created_at: string | null;
}

/** Directory (SCIM) connections per organization, and their SCIM tokens (shown once). */
export function Directory() {
  const orgs = useLoad(allOrganizations, []);
  const [org, setOrg] = useState('');
  useEffect(() => {
    if (!org && orgs.data?.[0]) setOrg(orgs.data[0].id);
  }, [orgs.data, org]);
  if (orgs.loading) return <Loading what="organizations" />;
  if (orgs.error) return <ErrorNote error={orgs.error} />;
  if (!orgs.data?.length) return <Empty>Directory connections belong to organizations: create an organization first.</Empty>;
  return (
    <>
      <Field id="dir-org" label="Organization">
        <select id="dir-org" value={org} onChange={(e) => setOrg(e.target.value)}>
          {orgs.data.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      </Field>
      {org ? <Connections key={org} org={org} /> : null}
    </>
  );
}

function Connections({ org }: { org: string }) {
  const base = `/organizations/${org}/directory`;
  const list = useLoad(() => api<Page<Connection>>('GET', `${base}/connections?limit=100`), [org]);
  const [token, setToken] = useState<{ token: string; url: string }>();
  const [error, setError] = useState<unknown>();
  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    setError(undefined);
    try {
      await api('POST', `${base}/connections`, { name: new FormData(form).get('name') });
      form.reset();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      {token ? (
        <>
          <p>
            SCIM base URL: <code>{token.url}</code>
          </p>
          <SecretOnce label="SCIM token" secret={token.token} onDone={() => setToken(undefined)} />
        </>
      ) : null}
      <form className="card" onSubmit={create} aria-labelledby="dir-new">
        <h2 id="dir-new">New connection</h2>
        <Field id="dir-name" label="Name">
          <input id="dir-name" name="name" required maxLength={200} placeholder="Okta" />
        </Field>
        <ErrorNote error={error} />
        <button type="submit" className="primary">
          Create connection
        </button>
      </form>
      <section aria-labelledby="dir-list">
        <h2 id="dir-list">Connections</h2>
        {list.loading ? <Loading what="connections" /> : null}
        <ErrorNote error={list.error} />
        {list.data && list.data.data.length === 0 ? <Empty>No directory connections in this organization.</Empty> : null}
        <ul className="pick">
          {(list.data?.data ?? []).map((c) => (
            <li key={c.id}>
              <span className="grow">
                <strong>{c.name}</strong> <span className="muted">{c.has_token ? `token since ${when(c.token_created_at)}` : 'no token yet'}</span>
              </span>
              <ConfirmButton
                label={c.has_token ? 'New SCIM token' : 'Mint SCIM token'}
                question={c.has_token ? 'Mint a new token? The current one stops working.' : 'Mint the SCIM token?'}
                confirmLabel="Yes, mint"
                onConfirm={async () => {
                  const r = await api<{ token: string; scim_base_url: string }>('POST', `${base}/scim_token`, { connection_id: c.id });
                  setToken({ token: r.token, url: r.scim_base_url });
                  list.reload();
                }}
              />
              <ConfirmButton
                label="Delete"
                question={`Delete ${c.name}? Provisioned users stay.`}
                confirmLabel="Yes, delete"
                onConfirm={async () => {
                  await api('DELETE', `${base}/connections/${c.id}`);
                  list.reload();
                }}
              />
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}
