import { useState } from 'react';
import { call, client } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { DataTable, Loaded, Pager, useCursors } from '../components/lists';
import { OrganizationOptions, useOrganizations } from '../components/organizations';
import { ConfirmButton, Field, SecretOnce, useLoad, when } from '../ui';

export function ApiKeys({ permissions }: { permissions: string[] }) {
  const orgs = useOrganizations();
  const [org, setOrg] = useState('');
  const cursors = useCursors();
  // An organization's keys, or the platform keys (no organization).
  const keys = useLoad(() => {
    const query = { limit: 50, after: cursors.after };
    return org
      ? call(client.GET('/organizations/{orgId}/api_keys', { params: { path: { orgId: org }, query } }))
      : call(client.GET('/api_keys', { params: { query } }));
  }, [org, cursors.after]);
  const [minted, setMinted] = useState<{ key: string; name: string }>();
  // Least privilege: a new key starts with no permission; the administrator ticks what it needs.
  const [scopes, setScopes] = useState<Set<string>>(new Set());

  const mint = useSubmit(
    async (data) => {
      if (scopes.size === 0) throw new Error('Tick at least one permission: a key can do only what it is given.');
      const body = { name: String(data.get('name') ?? ''), scopes: [...scopes] };
      const r = org
        ? await call(client.POST('/organizations/{orgId}/api_keys', { params: { path: { orgId: org } }, body }))
        : await call(client.POST('/api_keys', { body }));
      setMinted({ key: r.key, name: r.name });
      setScopes(new Set());
      keys.reload();
    },
    { reset: true },
  );
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
            cursors.reset();
          }}
        >
          <option value="">The platform (tenant-wide keys)</option>
          <OrganizationOptions organizations={orgs.data} />
        </select>
      </Field>
      {minted ? <SecretOnce label={`New API key “${minted.name}”`} secret={minted.key} onDone={() => setMinted(undefined)} /> : null}
      <FormCard id="key-new" title="Mint an API key" submit="Mint API key" form={mint}>
        <Field id="key-name" label="Name">
          <input id="key-name" name="name" required maxLength={200} placeholder="CI deploys" />
        </Field>
        <fieldset>
          <legend>Permissions</legend>
          <p className="muted" id="key-scopes-hint">
            Give the key only the permissions it needs (none is ticked at first).{' '}
            <button type="button" onClick={() => setScopes(new Set(permissions))}>
              Tick all
            </button>{' '}
            <button type="button" onClick={() => setScopes(new Set())}>
              Clear
            </button>
          </p>
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
      </FormCard>
      <section aria-labelledby="key-list">
        <h2 id="key-list">Live keys</h2>
        <Loaded state={keys} rows={keys.data?.data} what="API keys" empty="No live keys here.">
          {(rows) => (
            <DataTable columns={['Name', 'Key', 'Created', 'Last used', { hidden: 'Actions' }]} rows={rows} rowKey={(k) => k.id}>
              {(k) => (
                <>
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
                        if (org) await call(client.DELETE('/organizations/{orgId}/api_keys/{keyId}', { params: { path: { orgId: org, keyId: k.id } } }));
                        else await call(client.DELETE('/api_keys/{keyId}', { params: { path: { keyId: k.id } } }));
                        keys.reload();
                      }}
                    />
                  </td>
                </>
              )}
            </DataTable>
          )}
        </Loaded>
        <Pager cursors={cursors} page={keys.data} />
      </section>
    </>
  );
}
