import { api, type AuditEvent, type Page, query } from '../api';
import { Empty, ErrorNote, Loading, useLoad, whenSeconds } from '../ui';

/** The newest events of the feed (read oldest first, so paged to its end). */
async function feedTail(types?: string, keep = 8): Promise<{ total: number; tail: AuditEvent[]; more: boolean }> {
  let after: string | undefined;
  let tail: AuditEvent[] = [];
  let total = 0;
  for (let i = 0; i < 50; i++) {
    const page = await api<Page<AuditEvent>>('GET', `/events${query({ limit: 100, after, types })}`);
    total += page.data.length;
    tail = [...tail, ...page.data].slice(-keep);
    if (!page.has_more || !page.next_cursor) return { total, tail: tail.reverse(), more: false };
    after = page.next_cursor;
  }
  return { total, tail: tail.reverse(), more: true };
}

const count = (p: Page<unknown>) => (p.has_more ? `${p.data.length}+` : String(p.data.length));

export function Overview() {
  const counts = useLoad(async () => {
    const [orgs, users, keys] = await Promise.all([
      api<Page<unknown>>('GET', '/organizations?limit=100'),
      api<Page<unknown>>('GET', '/users?limit=100'),
      api<Page<unknown>>('GET', '/api_keys?limit=100'),
    ]);
    return { orgs: count(orgs), users: count(users), keys: count(keys) };
  }, []);
  const recent = useLoad(() => feedTail(), []);
  const failures = useLoad(() => feedTail('webhook_delivery.failed', 5), []);

  return (
    <>
      <section aria-labelledby="counts">
        <h2 id="counts">At a glance</h2>
        {counts.loading ? <Loading what="counts" /> : null}
        <ErrorNote error={counts.error} />
        {counts.data ? (
          <dl className="stats">
            <div>
              <dt>Organizations</dt>
              <dd>{counts.data.orgs}</dd>
            </div>
            <div>
              <dt>Users</dt>
              <dd>{counts.data.users}</dd>
            </div>
            <div>
              <dt>Platform API keys</dt>
              <dd>{counts.data.keys}</dd>
            </div>
          </dl>
        ) : null}
      </section>
      <section aria-labelledby="health">
        <h2 id="health">Webhook health</h2>
        {failures.loading ? <Loading what="webhook health" /> : null}
        <ErrorNote error={failures.error} />
        {failures.data ? (
          failures.data.total === 0 ? (
            <p className="ok">No failed webhook deliveries.</p>
          ) : (
            <>
              <p className="warning">
                {failures.data.total}
                {failures.data.more ? '+' : ''} {failures.data.total === 1 ? 'delivery' : 'deliveries'} used up every attempt (a replayed one is listed too). Replay from the Webhooks
                screen; the latest:
              </p>
              <ul>
                {failures.data.tail.map((e) => (
                  <li key={e.id}>
                    {whenSeconds(e.created)}: {String(e.data.event_type)} to endpoint <code>{String(e.data.endpoint_id)}</code> (last status {String(e.data.last_status_code ?? e.data.last_error ?? 'none')})
                  </li>
                ))}
              </ul>
            </>
          )
        ) : null}
      </section>
      <section aria-labelledby="recent">
        <h2 id="recent">Recent events</h2>
        {recent.loading ? <Loading what="events" /> : null}
        <ErrorNote error={recent.error} />
        {recent.data && recent.data.tail.length === 0 ? <Empty>No events yet.</Empty> : null}
        {recent.data && recent.data.tail.length > 0 ? (
          <div className="table">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Type</th>
                  <th scope="col">Actor</th>
                </tr>
              </thead>
              <tbody>
                {recent.data.tail.map((e) => (
                  <tr key={e.id}>
                    <td>{whenSeconds(e.created)}</td>
                    <td>
                      <code>{e.type}</code>
                    </td>
                    <td>
                      {e.actor.type}
                      {e.actor.id ? ` ${e.actor.id}` : ''}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </>
  );
}
