import { call, client, own } from '../api';
import { EventCells } from '../components/events';
import { DataTable, Loaded, LoadStatus } from '../components/lists';
import { useLoad, whenSeconds } from '../ui';

/** GET /console/api/overview: exact counts, one COUNT each on the server. */
interface Counts {
  organizations: number;
  users: number;
  platform_api_keys: number;
  oauth_clients: number;
  webhooks: number;
  failing_webhooks: number;
}

/** The newest events of the feed (of some types), newest first. */
const newest = (limit: number, types?: string) => call(client.GET('/events', { params: { query: { limit, order: 'desc', types } } }));

const STATS: Array<[keyof Counts, string]> = [
  ['organizations', 'Organizations'],
  ['users', 'Users'],
  ['platform_api_keys', 'Platform API keys'],
  ['oauth_clients', 'OAuth clients'],
  ['webhooks', 'Webhook endpoints'],
  ['failing_webhooks', 'Failing webhook endpoints'],
];

export function Overview() {
  const counts = useLoad(() => own<Counts>('GET', '/overview'), []);
  const recent = useLoad(() => newest(8), []);
  const failures = useLoad(() => newest(5, 'webhook_delivery.failed'), []);
  const failing = counts.data?.failing_webhooks;

  return (
    <>
      <section aria-labelledby="counts">
        <h2 id="counts">At a glance</h2>
        <LoadStatus state={counts} what="counts" />
        {counts.data ? (
          <dl className="stats">
            {STATS.map(([key, label]) => (
              <div key={key} data-count={key}>
                <dt>{label}</dt>
                <dd>{counts.data?.[key]}</dd>
              </div>
            ))}
          </dl>
        ) : null}
      </section>
      <section aria-labelledby="health">
        <h2 id="health">Webhook health</h2>
        <LoadStatus state={failures} what="webhook health" />
        {failing === 0 ? <p className="ok">No failing endpoints: no failed webhook deliveries.</p> : null}
        {failing ? (
          <>
            <p className="warning">
              {failing === 1 ? '1 endpoint is' : `${failing} endpoints are`} failing: the latest delivery used up every attempt. Replay it from the Webhooks
              screen.
            </p>
            {failures.data?.data.length ? (
              <>
                <p>The latest failed deliveries:</p>
                <ul>
                  {failures.data.data.map((e) => (
                    <li key={e.id}>
                      {whenSeconds(e.created)}: {String(e.data.event_type)} to endpoint <code>{String(e.data.endpoint_id)}</code> (last status{' '}
                      {String(e.data.last_status_code ?? e.data.last_error ?? 'none')})
                    </li>
                  ))}
                </ul>
              </>
            ) : null}
          </>
        ) : null}
      </section>
      <section aria-labelledby="recent">
        <h2 id="recent">Recent events</h2>
        <Loaded state={recent} rows={recent.data?.data} what="events" empty="No events yet.">
          {(rows) => (
            <DataTable columns={['When', 'Type', 'Actor']} rows={rows} rowKey={(e) => e.id}>
              {(e) => <EventCells event={e} />}
            </DataTable>
          )}
        </Loaded>
      </section>
    </>
  );
}
