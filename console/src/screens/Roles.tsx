import { useState } from 'react';
import { ApiError, type Body, call, client, type ResourceServer } from '../api';
import { FormCard, useAction, useSubmit } from '../components/forms';
import { Loaded, LoadStatus, PickList } from '../components/lists';
import { OrganizationScope } from '../components/organizations';
import { allPages, organizationRoles, type Role, RoleOptions, rolesIn, tenantRoles } from '../components/roles';
import { ConfirmButton, ErrorNote, Field, useLoad } from '../ui';
import { Fact } from './feature-kit';

type RoleBody = Body<'/roles', 'post'>;
type RolePatch = Body<'/roles/{roleKey}', 'patch'>;
type Grant = Role['permissions'][number];

/** Where a role lives: the tenant (no organization) or one organization. */
interface Scope {
  org?: string;
  list: () => Promise<Role[]>;
  create: (body: RoleBody) => Promise<Role>;
  update: (key: string, body: RolePatch) => Promise<Role>;
  remove: (key: string, reassign?: string) => Promise<void>;
  /** The roles a deleted role's holders may be given instead. */
  reassignable: () => Promise<Role[]>;
}

const tenantScope: Scope = {
  list: tenantRoles,
  create: (body) => call(client.POST('/roles', { body })),
  update: (roleKey, body) => call(client.PATCH('/roles/{roleKey}', { params: { path: { roleKey } }, body })),
  remove: (roleKey, reassign) => call(client.DELETE('/roles/{roleKey}', { params: { path: { roleKey }, query: { reassign } } })),
  reassignable: tenantRoles,
};

const organizationScope = (orgId: string): Scope => ({
  org: orgId,
  list: () => organizationRoles(orgId),
  create: (body) => call(client.POST('/organizations/{orgId}/roles', { params: { path: { orgId } }, body })),
  update: (roleKey, body) => call(client.PATCH('/organizations/{orgId}/roles/{roleKey}', { params: { path: { orgId, roleKey } }, body })),
  remove: (roleKey, reassign) => call(client.DELETE('/organizations/{orgId}/roles/{roleKey}', { params: { path: { orgId, roleKey }, query: { reassign } } })),
  reassignable: () => rolesIn(orgId),
});

const allResourceServers = () => allPages((after) => call(client.GET('/resource_servers', { params: { query: { limit: 100, after } } })));

/**
 * Roles (docs/authorization.md): the tenant's roles, each organization's own, the permissions each
 * grants (picked from the resource servers' declared permissions) and the default role of new members.
 */
export function Roles() {
  const servers = useLoad(allResourceServers, []);
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  return (
    <>
      <DefaultRole version={version} />
      <section aria-labelledby="roles-tenant">
        <h2 id="roles-tenant">Tenant roles</h2>
        <p className="muted">Every organization offers these roles; an organization's own role of the same key replaces one there.</p>
        <LoadStatus state={servers} what="resource servers" />
        <RoleSection scope={tenantScope} servers={servers.data ?? []} onChanged={changed} />
      </section>
      <section aria-labelledby="roles-org">
        <h2 id="roles-org">Organization roles</h2>
        <OrganizationScope id="roles-org-pick" empty="Organization roles belong to organizations: create an organization first.">
          {(org) => <RoleSection key={org} scope={organizationScope(org)} servers={servers.data ?? []} onChanged={changed} />}
        </OrganizationScope>
      </section>
    </>
  );
}

/** The tenant's default role for new members (PUT /role_settings: a tenant role). */
function DefaultRole({ version }: { version: number }) {
  const state = useLoad(() => Promise.all([call(client.GET('/role_settings')), tenantRoles()]), [version]);
  const form = useSubmit(async (f) => {
    await call(client.PUT('/role_settings', { body: { default_role: String(f.get('default_role')) } }));
    state.reload();
  });
  const [settings, roles] = state.data ?? [];
  return (
    <FormCard id="roles-default" title="Default role" submit="Save default role" form={form} status={form.done ? 'Default role saved.' : ''}>
      <LoadStatus state={state} what="the default role" />
      {settings && roles ? (
        <Field id="roles-default-pick" label="Role of new members" hint="Given when a member is added without roles (and by sign-up flows that add members).">
          <select
            id="roles-default-pick"
            name="default_role"
            key={settings.default_role}
            defaultValue={settings.default_role}
            aria-describedby="roles-default-pick-hint"
          >
            <RoleOptions roles={roles} held={[settings.default_role]} />
          </select>
        </Field>
      ) : null}
    </FormCard>
  );
}

function RoleSection({ scope, servers, onChanged }: { scope: Scope; servers: ResourceServer[]; onChanged: () => void }) {
  const list = useLoad(scope.list, [scope.org]);
  const [selected, setSelected] = useState<string>();
  const [note, setNote] = useState('');
  const prefix = scope.org ? 'org-role' : 'role';
  const chosen = list.data?.find((r) => r.key === selected);
  const reload = () => {
    list.reload();
    onChanged();
  };
  return (
    <>
      <RoleForm
        prefix={prefix}
        scope={scope}
        servers={servers}
        onSaved={(r) => {
          setNote(`Role ${r.key} defined.`);
          setSelected(r.key);
          reload();
        }}
      />
      <p role="status" className="muted">
        {note}
      </p>
      <Loaded state={list} rows={list.data} what="roles" empty={scope.org ? 'This organization has no roles of its own.' : 'No tenant roles yet.'}>
        {(rows) => (
          <PickList rows={rows} rowKey={(r) => r.key} selected={selected} onPick={(k) => setSelected(k === selected ? undefined : k)}>
            {(r) => (
              <>
                <strong>{r.name}</strong> <span className="muted">{r.key}</span>
              </>
            )}
          </PickList>
        )}
      </Loaded>
      {chosen ? (
        <section aria-labelledby={`${prefix}-${chosen.key}-title`} className="card">
          <h3 id={`${prefix}-${chosen.key}-title`}>
            {chosen.name} ({chosen.key})
          </h3>
          <dl className="facts">
            <Fact label="Permissions" value={chosen.permissions.map((p) => grantLabel(p, servers)).join(', ') || 'none'} />
          </dl>
          <RoleForm
            key={chosen.updated_at}
            prefix={`${prefix}-${chosen.key}`}
            scope={scope}
            servers={servers}
            current={chosen}
            onSaved={(r) => {
              setNote(`Role ${r.key} saved.`);
              reload();
            }}
          />
          <DeleteRole
            key={chosen.key}
            scope={scope}
            role={chosen}
            onDeleted={() => {
              setNote(`Role ${chosen.key} deleted.`);
              setSelected(undefined);
              reload();
            }}
          />
        </section>
      ) : null}
    </>
  );
}

const grantValue = (g: Grant) => `${g.resource_server_id} ${g.permission}`;
const grantLabel = (g: Grant, servers: ResourceServer[]) =>
  `${servers.find((s) => s.id === g.resource_server_id)?.name ?? g.resource_server_id}: ${g.permission}`;

/** Create (no `current`) or edit a role: key (fixed once made), name, description and the permissions it grants. */
function RoleForm({
  prefix,
  scope,
  servers,
  current,
  onSaved,
}: {
  prefix: string;
  scope: Scope;
  servers: ResourceServer[];
  current?: Role;
  onSaved: (r: Role) => void;
}) {
  const form = useSubmit(
    async (f) => {
      const text = (k: string) => String(f.get(k) ?? '').trim();
      const permissions = f.getAll('permission').map((v) => {
        const [resource_server_id, permission] = String(v).split(' ') as [string, string];
        return { resource_server_id, permission };
      });
      const description = text('description') || null;
      if (current) onSaved(await scope.update(current.key, { name: text('name'), description, permissions }));
      else onSaved(await scope.create({ key: text('key'), name: text('name'), description, permissions }));
    },
    { reset: !current },
  );
  const granted = new Set(current?.permissions.map(grantValue));
  const declared = servers.filter((s) => s.permissions.length > 0);
  return (
    <FormCard
      id={`${prefix}-form`}
      title={current ? `Edit ${current.key}` : scope.org ? 'Define an organization role' : 'Define a tenant role'}
      heading="h3"
      submit={current ? 'Save role' : 'Define role'}
      form={form}
    >
      {current ? null : (
        <Field id={`${prefix}-key`} label="Key" hint="Lower-case letters, digits, _ and -; fixed once defined. Tokens carry it.">
          <input
            id={`${prefix}-key`}
            name="key"
            required
            maxLength={64}
            pattern="[a-z0-9_\-]+"
            placeholder="billing_admin"
            aria-describedby={`${prefix}-key-hint`}
          />
        </Field>
      )}
      <Field id={`${prefix}-name`} label="Name">
        <input id={`${prefix}-name`} name="name" required maxLength={200} defaultValue={current?.name} placeholder="Billing administrator" />
      </Field>
      <Field id={`${prefix}-description`} label="Description">
        <input id={`${prefix}-description`} name="description" maxLength={1000} defaultValue={current?.description ?? ''} />
      </Field>
      {declared.length === 0 ? (
        <p className="muted">
          No resource server declares permissions yet (Applications → resource servers): the role can still be defined and given permissions later.
        </p>
      ) : (
        declared.map((s) => (
          <fieldset key={s.id}>
            <legend>
              Permissions of {s.name} <span className="muted">({s.identifier})</span>
            </legend>
            <div className="scopes">
              {s.permissions.map((p) => {
                const value = `${s.id} ${p.name}`;
                return (
                  <label className="check" key={p.name}>
                    <input type="checkbox" name="permission" value={value} defaultChecked={granted.has(value)} /> {p.name}
                    {p.description ? <span className="muted"> — {p.description}</span> : null}
                  </label>
                );
              })}
            </div>
          </fieldset>
        ))
      )}
    </FormCard>
  );
}

/** Delete after confirmation; while members hold the role the API answers 409, and the screen offers to give them another role instead. */
function DeleteRole({ scope, role, onDeleted }: { scope: Scope; role: Role; onDeleted: () => void }) {
  const [held, setHeld] = useState(false);
  const others = useLoad(() => (held ? scope.reassignable() : Promise.resolve([])), [held]);
  const reassign = useAction();
  const [to, setTo] = useState('');
  const options = (others.data ?? []).filter((r) => r.key !== role.key);
  return (
    <div>
      <ConfirmButton
        label="Delete role"
        question={`Delete the role ${role.key}?`}
        confirmLabel="Yes, delete"
        onConfirm={async () => {
          try {
            await scope.remove(role.key);
          } catch (err) {
            if (err instanceof ApiError && err.status === 409) setHeld(true);
            throw err;
          }
          onDeleted();
        }}
      />
      {held ? (
        <form
          className="filters"
          aria-labelledby={`reassign-${role.key}`}
          onSubmit={(e) => {
            e.preventDefault();
            void reassign.run(async () => {
              if (!to) throw new Error('Choose the role its members get instead.');
              await scope.remove(role.key, to);
              onDeleted();
            });
          }}
        >
          <p id={`reassign-${role.key}`}>Members hold {role.key}: delete it and give them another role instead.</p>
          <LoadStatus state={others} what="roles" />
          <Field id={`reassign-${role.key}-to`} label="Give its members the role">
            <select id={`reassign-${role.key}-to`} value={to} onChange={(e) => setTo(e.target.value)} required>
              <option value="">Choose a role…</option>
              <RoleOptions roles={options} />
            </select>
          </Field>
          <button type="submit" className="danger" disabled={reassign.busy}>
            Delete and reassign
          </button>
          <ErrorNote error={reassign.error} />
        </form>
      ) : null}
    </div>
  );
}
