import { type FormEvent, useState } from 'react';
import { ACTOR_TYPES, call, client } from '../api';
import { EventCells, EventData } from '../components/events';
import { DataTable, Loaded, Pager, useCursors } from '../components/lists';
import { OrganizationOptions, useOrganizations } from '../components/organizations';
import { Field, useLoad } from '../ui';

type Order = 'desc' | 'asc';
type ActorType = (typeof ACTOR_TYPES)[number];
/** A filter left empty is not sent. */
const given = (s: string) => s || undefined;

/** The /v1/events feed, newest or oldest first, filtered on the server, a page at a time. */
export function Events() {
  const orgs = useOrganizations();
  const [filters, setFilters] = useState({ types: '', organization_id: '', actor_type: '', actor_id: '' });
  const [order, setOrder] = useState<Order>('desc');
  const cursors = useCursors();
  const feed = useLoad(
    () =>
      call(
        client.GET('/events', {
          params: {
            query: {
              limit: 25,
              after: cursors.after,
              order,
              types: given(filters.types.replace(/\s+/g, '')),
              organization_id: given(filters.organization_id),
              actor_type: given(filters.actor_type) as ActorType | undefined,
              actor_id: given(filters.actor_id),
            },
          },
        }),
      ),
    [filters, order, cursors.after],
  );
  const apply = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const text = (name: string) => String(data.get(name) ?? '').trim();
    cursors.reset();
    setFilters({ types: text('types'), organization_id: text('organization_id'), actor_type: text('actor_type'), actor_id: text('actor_id') });
  };
  const flip = (to: Order) => {
    cursors.reset();
    setOrder(to);
  };

  return (
    <>
      <form className="card filters" onSubmit={apply} aria-label="Filter events">
        <Field id="ev-types" label="Types (comma-separated)">
          <input id="ev-types" name="types" defaultValue={filters.types} placeholder="api_key.created, member.added" />
        </Field>
        <Field id="ev-org" label="Organization">
          <select id="ev-org" name="organization_id" defaultValue={filters.organization_id}>
            <option value="">Any</option>
            <OrganizationOptions organizations={orgs.data} />
          </select>
        </Field>
        <Field id="ev-actor-type" label="Actor type">
          <select id="ev-actor-type" name="actor_type" defaultValue={filters.actor_type}>
            <option value="">Any</option>
            {ACTOR_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </Field>
        <Field id="ev-actor-id" label="Actor id (with a type)" hint="user_…, key_…, dir_…, or a client id">
          <input id="ev-actor-id" name="actor_id" defaultValue={filters.actor_id} aria-describedby="ev-actor-id-hint" />
        </Field>
        <button type="submit">Apply filters</button>
      </form>
      <fieldset className="row">
        <legend>Order</legend>
        {(
          [
            ['desc', 'Newest first'],
            ['asc', 'Oldest first'],
          ] as const
        ).map(([value, label]) => (
          <label key={value} className="check">
            <input type="radio" name="ev-order" value={value} checked={order === value} onChange={() => flip(value)} />
            {label}
          </label>
        ))}
      </fieldset>
      <Loaded state={feed} rows={feed.data?.data} what="events" empty="No events match.">
        {(shown) => (
          <DataTable columns={['When', 'Type', 'Actor', 'Organization', 'Data']} rows={shown} rowKey={(e) => e.id} rowProps={(e) => ({ 'data-event': e.id })}>
            {(e) => (
              <>
                <EventCells event={e} />
                <td>{e.organization_id ? <code>{e.organization_id}</code> : '—'}</td>
                <td>
                  <EventData data={e.data} />
                </td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <Pager cursors={cursors} page={feed.data} />
    </>
  );
}
