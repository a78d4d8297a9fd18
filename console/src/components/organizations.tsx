/** Organization pickers: for screens whose data belongs to one organization at a time. */
import { type ReactNode, useEffect, useState } from 'react';
import { allOrganizations, type Organization } from '../api';
import { Empty, ErrorNote, Field, Loading, useLoad } from '../ui';

/** Every organization, for pickers (loaded once per screen). */
export const useOrganizations = () => useLoad(allOrganizations, []);

/** One <option> per organization (value: its id). */
export function OrganizationOptions({ organizations }: { organizations: Organization[] | undefined }) {
  return (
    <>
      {(organizations ?? []).map((o) => (
        <option key={o.id} value={o.id}>
          {o.name}
        </option>
      ))}
    </>
  );
}

/**
 * Loads the organizations, picks the first, and renders `children` for the chosen one under a
 * labelled "Organization" select; `empty` explains what to do when there are none yet.
 */
export function OrganizationScope({ id, empty, children }: { id: string; empty: string; children: (org: string) => ReactNode }) {
  const orgs = useOrganizations();
  const [org, setOrg] = useState('');
  useEffect(() => {
    if (!org && orgs.data?.[0]) setOrg(orgs.data[0].id);
  }, [orgs.data, org]);
  if (orgs.loading) return <Loading what="organizations" />;
  if (orgs.error) return <ErrorNote error={orgs.error} />;
  if (!orgs.data?.length) return <Empty>{empty}</Empty>;
  return (
    <>
      <Field id={id} label="Organization">
        <select id={id} value={org} onChange={(e) => setOrg(e.target.value)}>
          <OrganizationOptions organizations={orgs.data} />
        </select>
      </Field>
      {org ? children(org) : null}
    </>
  );
}
