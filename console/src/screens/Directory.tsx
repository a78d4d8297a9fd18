import { useEffect, useState } from 'react';
import { call, client, type Item } from '../api';
import { RoleOptions, useRolesIn } from '../components/roles';
import { FormCard, useSubmit } from '../components/forms';
import { DataTable, Loaded, Pager, PickList, useCursors } from '../components/lists';
import { OrganizationScope } from '../components/organizations';
import { ConfirmButton, Field, SecretOnce, useLoad, when } from '../ui';

type Connection = Item<'/organizations/{orgId}/directory/connections'>;
/** Where a connection's own routes are: its organization and id. */
type ConnectionPath = { orgId: string; connectionId: string };

/** Directory (SCIM) connections per organization: their tokens (shown once), role mapping, and what they provisioned. */
export function Directory() {
  return (
    <OrganizationScope id="dir-org" empty="Directory connections belong to organizations: create an organization first.">
      {(org) => <Connections key={org} org={org} />}
    </OrganizationScope>
  );
}

function Connections({ org }: { org: string }) {
  const list = useLoad(
    () => call(client.GET('/organizations/{orgId}/directory/connections', { params: { path: { orgId: org }, query: { limit: 100 } } })),
    [org],
  );
  const [token, setToken] = useState<{ token: string; url: string }>();
  const [selected, setSelected] = useState<string>();
  const rows = list.data?.data;
  useEffect(() => {
    if (rows && !rows.some((c) => c.id === selected)) setSelected(rows[0]?.id);
  }, [rows, selected]);
  const create = useSubmit(
    async (data) => {
      const c = await call(
        client.POST('/organizations/{orgId}/directory/connections', { params: { path: { orgId: org } }, body: { name: String(data.get('name') ?? '') } }),
      );
      setSelected(c.id);
      list.reload();
    },
    { reset: true },
  );
  const chosen = rows?.find((c) => c.id === selected);
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
      <FormCard id="dir-new" title="New connection" submit="Create connection" form={create}>
        <Field id="dir-name" label="Name">
          <input id="dir-name" name="name" required maxLength={200} placeholder="Okta" />
        </Field>
      </FormCard>
      <section aria-labelledby="dir-list">
        <h2 id="dir-list">Connections</h2>
        <Loaded state={list} rows={rows} what="connections" empty="No directory connections in this organization.">
          {(shown) => (
            <PickList
              rows={shown}
              rowKey={(c) => c.id}
              selected={selected}
              onPick={setSelected}
              actions={(c) => (
                <>
                  <ConfirmButton
                    label={c.has_token ? 'New SCIM token' : 'Mint SCIM token'}
                    question={c.has_token ? 'Mint a new token? The current one stops working.' : 'Mint the SCIM token?'}
                    confirmLabel="Yes, mint"
                    onConfirm={async () => {
                      const r = await call(
                        client.POST('/organizations/{orgId}/directory/scim_token', { params: { path: { orgId: org } }, body: { connection_id: c.id } }),
                      );
                      setToken({ token: r.token, url: r.scim_base_url });
                      list.reload();
                    }}
                  />
                  <ConfirmButton
                    label="Delete"
                    question={`Delete ${c.name}? Provisioned users stay.`}
                    confirmLabel="Yes, delete"
                    onConfirm={async () => {
                      await call(
                        client.DELETE('/organizations/{orgId}/directory/connections/{connectionId}', { params: { path: { orgId: org, connectionId: c.id } } }),
                      );
                      list.reload();
                    }}
                  />
                </>
              )}
            >
              {(c) => (
                <>
                  <strong>{c.name}</strong> <span className="muted">{c.has_token ? `token since ${when(c.token_created_at)}` : 'no token yet'}</span>
                </>
              )}
            </PickList>
          )}
        </Loaded>
      </section>
      {chosen ? <ConnectionDetail key={chosen.id} at={{ orgId: org, connectionId: chosen.id }} connection={chosen} onSaved={list.reload} /> : null}
    </>
  );
}

/** One connection: its group→role mapping, and the users and groups it provisioned. */
function ConnectionDetail({ at, connection, onSaved }: { at: ConnectionPath; connection: Connection; onSaved: () => void }) {
  return (
    <section aria-labelledby="dir-detail" className="detail">
      <h2 id="dir-detail">{connection.name}</h2>
      <RoleMapping at={at} mapping={connection.group_roles} onSaved={onSaved} />
      <ProvisionedUsers at={at} />
      <ProvisionedGroups at={at} mapping={connection.group_roles} />
    </section>
  );
}

/** The group→role mapping (docs/scim.md); saving replaces the whole mapping (PATCH) and skips blank rows. */
function RoleMapping({ at, mapping, onSaved }: { at: ConnectionPath; mapping: Record<string, string>; onSaved: () => void }) {
  // Row keys stay stable while rows are added and removed (the inputs are uncontrolled).
  const [rows, setRows] = useState(() => Object.entries(mapping).map(([group, role], i) => ({ key: i, group, role })));
  const [nextKey, setNextKey] = useState(rows.length);
  // Any role of the organization (its own and the tenant's), as for members.
  const roles = useRolesIn(at.orgId);
  const save = useSubmit(async (data) => {
    const groups = data.getAll('group').map((g) => String(g).trim());
    const picked = data.getAll('role').map((r) => String(r));
    const group_roles = Object.fromEntries(
      groups.flatMap((g, i) => {
        const role = picked[i];
        return g && role ? [[g, role] as const] : [];
      }),
    );
    await call(client.PATCH('/organizations/{orgId}/directory/connections/{connectionId}', { params: { path: at }, body: { group_roles } }));
    onSaved();
  });
  return (
    <FormCard id="dir-mapping" title="Group → role mapping" heading="h3" submit="Save mapping" form={save} status={save.done ? 'Mapping saved.' : ''}>
      <p className="muted">
        Group names match case-insensitively. With groups mapped, the directory owns its active users' roles: a user in several mapped groups gets admin first,
        then the first other role by key, then member; saving applies that at once. With none, roles are left alone.
      </p>
      {rows.length === 0 ? <p className="empty">No groups are mapped.</p> : null}
      {rows.map((r, i) => (
        <div className="filters" key={r.key} role="group" aria-label={`Mapping ${i + 1}`}>
          <Field id={`dir-map-group-${r.key}`} label={`Group ${i + 1}`}>
            <input id={`dir-map-group-${r.key}`} name="group" defaultValue={r.group} maxLength={256} placeholder="Engineering" />
          </Field>
          <Field id={`dir-map-role-${r.key}`} label={`Role of group ${i + 1}`}>
            <select id={`dir-map-role-${r.key}`} name="role" defaultValue={r.role}>
              <RoleOptions roles={roles.data ?? []} held={[r.role]} />
            </select>
          </Field>
          <button type="button" onClick={() => setRows((all) => all.filter((x) => x.key !== r.key))}>
            Remove group {i + 1}
          </button>
        </div>
      ))}
      <p>
        <button
          type="button"
          onClick={() => {
            setRows((all) => [...all, { key: nextKey, group: '', role: 'member' }]);
            setNextKey((k) => k + 1);
          }}
        >
          Add a group
        </button>
      </p>
    </FormCard>
  );
}

function ProvisionedUsers({ at }: { at: ConnectionPath }) {
  const cursors = useCursors();
  const users = useLoad(
    () =>
      call(
        client.GET('/organizations/{orgId}/directory/connections/{connectionId}/users', { params: { path: at, query: { limit: 20, after: cursors.after } } }),
      ),
    [at.orgId, at.connectionId, cursors.after],
  );
  return (
    <section aria-labelledby="dir-users">
      <h3 id="dir-users">Provisioned users</h3>
      <Loaded state={users} rows={users.data?.data} what="provisioned users" empty="The directory has provisioned no users through this connection yet.">
        {(rows) => (
          <DataTable
            columns={['User name', 'Name', 'Email', 'Status', 'External id', 'Updated']}
            rows={rows}
            rowKey={(u) => u.id}
            rowProps={(u) => ({ 'data-user': u.user_id })}
          >
            {(u) => (
              <>
                <td>{u.user_name}</td>
                <td>{u.display_name ?? '—'}</td>
                <td>{u.email ?? '—'}</td>
                <td>{u.active ? 'active' : 'deactivated'}</td>
                <td>{u.external_id ? <code>{u.external_id}</code> : '—'}</td>
                <td>{when(u.updated_at)}</td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <Pager cursors={cursors} page={users.data} />
    </section>
  );
}

function ProvisionedGroups({ at, mapping }: { at: ConnectionPath; mapping: Record<string, string> }) {
  const cursors = useCursors();
  const groups = useLoad(
    () =>
      call(
        client.GET('/organizations/{orgId}/directory/connections/{connectionId}/groups', { params: { path: at, query: { limit: 20, after: cursors.after } } }),
      ),
    [at.orgId, at.connectionId, cursors.after],
  );
  // The mapping's names are stored lower-cased; SCIM group names match case-insensitively.
  const roleOf = (name: string) => mapping[name.trim().toLowerCase()];
  return (
    <section aria-labelledby="dir-groups">
      <h3 id="dir-groups">Provisioned groups</h3>
      <Loaded state={groups} rows={groups.data?.data} what="provisioned groups" empty="The directory has provisioned no groups through this connection yet.">
        {(rows) => (
          <DataTable columns={['Group', 'Members', 'Mapped role', 'External id', 'Updated']} rows={rows} rowKey={(g) => g.id}>
            {(g) => (
              <>
                <td>{g.display_name}</td>
                <td>{g.member_count}</td>
                <td>{roleOf(g.display_name) ?? '—'}</td>
                <td>{g.external_id ? <code>{g.external_id}</code> : '—'}</td>
                <td>{when(g.updated_at)}</td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <Pager cursors={cursors} page={groups.data} />
    </section>
  );
}
