import { type FormEvent, useState } from 'react';
import { allOrganizations, api, type AuditEvent, type Page, query } from '../api';
import { Empty, ErrorNote, Field, Loading, useLoad, whenSeconds } from '../ui';

/** The /v1/events feed (oldest first) with its filters, a page at a time. */
export function Events() {
  const orgs = useLoad(allOrganizations, []);
  const [filters, setFilters] = useState({ types: '', organization_id: '', actor: '' });
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  const feed = useLoad(
    () => api<Page<AuditEvent>>('GET', `/events${query({ limit: 25, after, types: filters.types.replace(/\s+/g, ''), organization_id: filters.organization_id })}`),
    [filters.types, filters.organization_id, after],
  );
  const apply = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    setCursors([]);
    setFilters({ types: String(data.get('types') ?? ''), organization_id: String(data.get('organization_id') ?? ''), actor: String(data.get('actor') ?? '').trim() });
  };
  // The feed filters by type and organization; the actor filter applies to the page shown.
  const rows = (feed.data?.data ?? []).filter((e) => !filters.actor || e.actor.id === filters.actor || e.actor.type === filters.actor);

  return (
    <>
      <form className="card filters" onSubmit={apply} aria-label="Filter events">
        <Field id="ev-types" label="Types (comma-separated)">
          <input id="ev-types" name="types" defaultValue={filters.types} placeholder="api_key.created, member.added" />
        </Field>
        <Field id="ev-org" label="Organization">
          <select id="ev-org" name="organization_id" defaultValue={filters.organization_id}>
            <option value="">Any</option>
            {(orgs.data ?? []).map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        </Field>
        <Field id="ev-actor" label="Actor (type or id, this page)">
          <input id="ev-actor" name="actor" defaultValue={filters.actor} placeholder="user_… or api_key" />
        </Field>
        <button type="submit">Apply filters</button>
      </form>
      {feed.loading ? <Loading what="events" /> : null}
      <ErrorNote error={feed.error} />
      {feed.data && rows.length === 0 ? <Empty>No events match.</Empty> : null}
      {rows.length > 0 ? (
        <div className="table">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Type</th>
                <th scope="col">Actor</th>
                <th scope="col">Organization</th>
                <th scope="col">Data</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.id}>
                  <td>{whenSeconds(e.created)}</td>
                  <td>
                    <code>{e.type}</code>
                  </td>
                  <td>
                    {e.actor.type}
                    {e.actor.id ? <code> {e.actor.id}</code> : null}
                  </td>
                  <td>{e.organization_id ? <code>{e.organization_id}</code> : '—'}</td>
                  <td>
                    <code className="data">{JSON.stringify(e.data)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <div className="pager">
        {cursors.length > 0 ? (
          <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous page
          </button>
        ) : null}
        {feed.data?.has_more && feed.data.next_cursor ? (
          <button type="button" onClick={() => setCursors([...cursors, feed.data!.next_cursor!])}>
            Next page
          </button>
        ) : null}
      </div>
    </>
  );
}
