/**
 * The roles a member may hold in an organization: the tenant's roles and the organization's own
 * (an organization's role overrides a tenant role of the same key there), for the member,
 * directory and SSO pickers. Loaded from /v1/roles and /v1/organizations/{id}/roles.
 */
import { call, client, type Item, type Page } from '../api';
import { useLoad } from '../ui';

export type Role = Item<'/roles'>;

/** Every page (of 100) of a cursor-paged list. */
export async function allPages<T>(load: (after: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < 20; i++) {
    const page = await load(after);
    out.push(...page.data);
    if (!page.has_more || !page.next_cursor) break;
    after = page.next_cursor;
  }
  return out;
}

export const tenantRoles = () => allPages((after) => call(client.GET('/roles', { params: { query: { limit: 100, after } } })));
export const organizationRoles = (orgId: string) =>
  allPages((after) => call(client.GET('/organizations/{orgId}/roles', { params: { path: { orgId }, query: { limit: 100, after } } })));

/** The roles offered in an organization, by key (its own role in place of a tenant role of the same key). */
export async function rolesIn(orgId: string): Promise<Role[]> {
  const [tenant, own] = await Promise.all([tenantRoles(), organizationRoles(orgId)]);
  const byKey = new Map(tenant.map((r) => [r.key, r]));
  for (const r of own) byKey.set(r.key, r);
  return [...byKey.values()].sort((a, b) => a.key.localeCompare(b.key));
}

/** The roles offered in an organization (reload when a role changes elsewhere). */
export const useRolesIn = (orgId: string) => useLoad(() => rolesIn(orgId), [orgId]);

/** Who defines a role, for a label. */
export const roleLabel = (r: Role) => `${r.name} (${r.key}${r.organization_id ? ', this organization' : ''})`;

/** Keys a member holds that are not offered (a role deleted meanwhile) stay choosable, so saving does not drop them unseen. */
const withHeld = (roles: Role[], held: string[]) => [
  ...roles.map((r) => ({ key: r.key, label: roleLabel(r) })),
  ...held.filter((k) => !roles.some((r) => r.key === k)).map((k) => ({ key: k, label: k })),
];

/** One <option> per role (value: its key); `held` keeps a key no longer defined. */
export function RoleOptions({ roles, held = [] }: { roles: Role[]; held?: string[] }) {
  return (
    <>
      {withHeld(roles, held).map((r) => (
        <option key={r.key} value={r.key}>
          {r.label}
        </option>
      ))}
    </>
  );
}

/** A labelled group of checkboxes (name `roles`, value: key), one per role; several may be ticked. */
export function RoleChecks({ id, legend, roles, held = [], hint }: { id: string; legend: string; roles: Role[]; held?: string[]; hint?: string }) {
  return (
    <fieldset aria-describedby={hint ? `${id}-hint` : undefined}>
      <legend>{legend}</legend>
      {withHeld(roles, held).map((r) => (
        <label className="check" key={r.key}>
          <input type="checkbox" name="roles" value={r.key} defaultChecked={held.includes(r.key)} /> {r.label}
        </label>
      ))}
      {hint ? (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      ) : null}
    </fieldset>
  );
}
