import { type FormEvent, useState } from 'react';
import { type ApiKey, api, type Organization, type Page, allOrganizations, query } from '../api';
import { ConfirmButton, Empty, ErrorNote, Field, Loading, SecretOnce, useLoad, when } from '../ui';

export function ApiKeys({ permissions }: { permissions: string[] }) {
  const orgs = useLoad(allOrganizations, []);
  const [org, setOrg] = useState('');
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after[after.length - 1];
  const base = org ? `/organizations/${org}/api_keys` : '/api_keys';
  const keys = useLoad(() => api<Page<ApiKey>>('GET', `${base}${query({ limit: 50, after: cursor })}`), [base, cursor]);
  const [minted, setMinted] = useState<{ key: string; name: string }>();
  const [error, setError] = useState<unknown>();
  const [scopes, setScopes] = useState<Set<string>>(new Set(permissions));

  const mint = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const name = String(new FormData(form).get('name') ?? '');
    setError(undefined);
    try {
      const r = await api<ApiKey & { key: string }>('POST', base, { name, scopes: [...scopes] });
      setMinted({ key: r.key, name: r.name });
      form.reset();
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  const toggle = (p: string, on: boolean) => {
    const next = new Set(scopes);
    if (on) next.add(p);
    else next.delete(p);
    setScopes(next);
  };

  return (
    <>
      <Field id="key-org" label="Keys of">
        <select
          id="key-org"
          value={org}
          onChange={(e) => {
            setOrg(e.target.value);
            setAfter([]);
          }}
        >
          <option value="">The platform (tenant-wide keys)</option>
          {(orgs.data ?? []).map((o: Organization) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      </Field>
      {minted ? <SecretOnce label={`New API key “${minted.name}”`} secret={minted.key} onDone={() => setMinted(undefined)} /> : null}
      <form className="card" onSubmit={mint} aria-labelledby="key-new">
        <h2 id="key-new">Mint an API key</h2>
        <Field id="key-name" label="Name">
          <input id="key-name" name="name" required maxLength={200} placeholder="CI deploys" />
        </Field>
        <fieldset>
          <legend>Permissions</legend>
          <div className="scopes">
            {permissions.map((p) => (
              <div className="check" key={p}>
                <input id={`scope-${p}`} type="checkbox" checked={scopes.has(p)} onChange={(e) => toggle(p, e.target.checked)} />
                <label htmlFor={`scope-${p}`} className="mono">
                  {p}
                </label>
              </div>
            ))}
          </div>
        </fieldset>
        <ErrorNote error={error} />
        <button type="submit" className="primary">
          Mint API key
        </button>
      </form>
      <section aria-labelledby="key-list">
        <h2 id="key-list">Live keys</h2>
        {keys.loading ? <Loading what="API keys" /> : null}
        <ErrorNote error={keys.error} />
        {keys.data && keys.data.data.length === 0 ? <Empty>No live keys here.</Empty> : null}
        {keys.data && keys.data.data.length > 0 ? (
          <div className="table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.data.map((k) => (
                  <tr key={k.id}>
                    <td>
                      {k.name}
                      <br />
                      <small className="muted">{k.scopes.length === permissions.length ? 'every permission' : k.scopes.join(', ')}</small>
                    </td>
                    <td>
                      <code>{k.key_prefix}…</code>
                    </td>
                    <td>{when(k.created_at)}</td>
                    <td>{k.last_used_at ? when(k.last_used_at) : 'never'}</td>
                    <td>
                      <ConfirmButton
                        label="Revoke"
                        question={`Revoke “${k.name}”? Requests with it fail at once.`}
                        confirmLabel="Yes, revoke"
                        onConfirm={async () => {
                          await api('DELETE', `${base}/${k.id}`);
                          keys.reload();
                        }}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <div className="pager">
          {after.length > 0 ? (
            <button type="button" onClick={() => setAfter(after.slice(0, -1))}>
              Previous page
            </button>
          ) : null}
          {keys.data?.has_more && keys.data.next_cursor ? (
            <button type="button" onClick={() => setAfter([...after, keys.data!.next_cursor!])}>
              Next page
            </button>
          ) : null}
        </div>
      </section>
    </>
  );
}
