import { type FormEvent, useState } from 'react';
import { api, type Page } from '../api';
import { ConfirmButton, Empty, ErrorNote, Field, Loading, SecretOnce, useLoad } from '../ui';

interface Client {
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  grant_types: string[];
  token_endpoint_auth_method: string;
  client_secret?: string;
}

interface ResourceServer {
  id: string;
  name: string;
  identifier: string;
  scopes: string[];
  dpop_required: boolean;
}

const KINDS = {
  web: { label: 'Web app with a server (confidential, client_secret_basic)', body: { token_endpoint_auth_method: 'client_secret_basic', grant_types: ['authorization_code', 'refresh_token'] } },
  spa: { label: 'Single-page or native app (public, PKCE)', body: { token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] } },
  machine: { label: 'Machine to machine (client_credentials)', body: { token_endpoint_auth_method: 'client_secret_basic', grant_types: ['client_credentials'] } },
} as const;

const lines = (v: FormDataEntryValue | null) => String(v ?? '').split(/\s+/).map((s) => s.trim()).filter(Boolean);

/** OAuth clients and resource servers (APIs). */
export function Applications() {
  return (
    <>
      <Clients />
      <ResourceServers />
    </>
  );
}

function Clients() {
  const list = useLoad(() => api<Page<Client>>('GET', '/clients?limit=100'), []);
  const [secret, setSecret] = useState<{ id: string; secret: string }>();
  const [error, setError] = useState<unknown>();
  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const kind = KINDS[String(data.get('kind')) as keyof typeof KINDS];
    const redirects = lines(data.get('redirect_uris'));
    setError(undefined);
    try {
      const c = await api<Client>('POST', '/clients', { client_name: data.get('client_name'), ...kind.body, ...(redirects.length ? { redirect_uris: redirects } : {}) });
      if (c.client_secret) setSecret({ id: c.client_id, secret: c.client_secret });
      form.reset();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="clients">
      <h2 id="clients">OAuth clients</h2>
      {secret ? <SecretOnce label={`Client secret of ${secret.id}`} secret={secret.secret} onDone={() => setSecret(undefined)} /> : null}
      <form className="card" onSubmit={create} aria-labelledby="client-new">
        <h3 id="client-new">Register a client</h3>
        <Field id="client-name" label="Name">
          <input id="client-name" name="client_name" required maxLength={200} />
        </Field>
        <Field id="client-kind" label="Kind">
          <select id="client-kind" name="kind" defaultValue="web">
            {Object.entries(KINDS).map(([k, v]) => (
              <option key={k} value={k}>
                {v.label}
              </option>
            ))}
          </select>
        </Field>
        <Field id="client-redirects" label="Redirect URIs (one per line; not for machine to machine)">
          <textarea id="client-redirects" name="redirect_uris" rows={2} className="mono" placeholder="https://app.example/callback" />
        </Field>
        <ErrorNote error={error} />
        <button type="submit" className="primary">
          Register client
        </button>
      </form>
      {list.loading ? <Loading what="clients" /> : null}
      <ErrorNote error={list.error} />
      {list.data && list.data.data.length === 0 ? <Empty>No OAuth clients yet.</Empty> : null}
      {list.data && list.data.data.length > 0 ? (
        <div className="table">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Client id</th>
                <th scope="col">Grants</th>
                <th scope="col">Authentication</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((c) => (
                <tr key={c.client_id}>
                  <td>{c.client_name ?? '—'}</td>
                  <td>
                    <code>{c.client_id}</code>
                  </td>
                  <td>{c.grant_types.join(', ')}</td>
                  <td>{c.token_endpoint_auth_method}</td>
                  <td>
                    <ConfirmButton
                      label="Delete"
                      question={`Delete ${c.client_name ?? c.client_id}? Its tokens stop working.`}
                      confirmLabel="Yes, delete"
                      onConfirm={async () => {
                        await api('DELETE', `/clients/${encodeURIComponent(c.client_id)}`);
                        list.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function ResourceServers() {
  const list = useLoad(() => api<Page<ResourceServer>>('GET', '/resource_servers?limit=100'), []);
  const [error, setError] = useState<unknown>();
  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const scopes = lines(data.get('scopes'));
    setError(undefined);
    try {
      await api('POST', '/resource_servers', { name: data.get('name'), identifier: data.get('identifier'), ...(scopes.length ? { scopes } : {}) });
      form.reset();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="apis">
      <h2 id="apis">Resource servers (APIs)</h2>
      <form className="card" onSubmit={create} aria-labelledby="rs-new">
        <h3 id="rs-new">Register an API</h3>
        <Field id="rs-name" label="Name">
          <input id="rs-name" name="name" required maxLength={200} />
        </Field>
        <Field id="rs-identifier" label="Identifier (the audience URI)">
          <input id="rs-identifier" name="identifier" required placeholder="https://api.example" />
        </Field>
        <Field id="rs-scopes" label="Scopes (space-separated, optional)">
          <input id="rs-scopes" name="scopes" placeholder="read:orders write:orders" />
        </Field>
        <ErrorNote error={error} />
        <button type="submit" className="primary">
          Register API
        </button>
      </form>
      {list.loading ? <Loading what="resource servers" /> : null}
      <ErrorNote error={list.error} />
      {list.data && list.data.data.length === 0 ? <Empty>No resource servers yet.</Empty> : null}
      <ul className="pick">
        {(list.data?.data ?? []).map((rs) => (
          <li key={rs.id}>
            <span className="grow">
              <strong>{rs.name}</strong> <code>{rs.identifier}</code> <span className="muted">{rs.scopes.join(' ')}</span>
            </span>
            <ConfirmButton
              label="Delete"
              question={`Delete ${rs.name}?`}
              confirmLabel="Yes, delete"
              onConfirm={async () => {
                await api('DELETE', `/resource_servers/${rs.id}`);
                list.reload();
              }}
            />
          </li>
        ))}
      </ul>
    </section>
  );
}
