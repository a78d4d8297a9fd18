import { type FormEvent, useEffect, useState } from 'react';
import { allOrganizations, api, type Delivery, type Page, type Webhook } from '../api';
import { ConfirmButton, Empty, ErrorNote, Field, Loading, SecretOnce, useLoad, when } from '../ui';

export function Webhooks() {
  const orgs = useLoad(allOrganizations, []);
  const [org, setOrg] = useState('');
  useEffect(() => {
    if (!org && orgs.data?.[0]) setOrg(orgs.data[0].id);
  }, [orgs.data, org]);

  if (orgs.loading) return <Loading what="organizations" />;
  if (orgs.error) return <ErrorNote error={orgs.error} />;
  if (!orgs.data?.length) return <Empty>Webhooks belong to organizations: create an organization first.</Empty>;
  return (
    <>
      <Field id="hook-org" label="Organization">
        <select id="hook-org" value={org} onChange={(e) => setOrg(e.target.value)}>
          {orgs.data.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      </Field>
      {org ? <Endpoints key={org} org={org} /> : null}
    </>
  );
}

function Endpoints({ org }: { org: string }) {
  const list = useLoad(() => api<Page<Webhook>>('GET', `/organizations/${org}/webhooks?limit=100`), [org]);
  const [secret, setSecret] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [selected, setSelected] = useState<string>();

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const events = String(data.get('events') ?? '').split(/[\s,]+/).filter(Boolean);
    setError(undefined);
    try {
      const r = await api<Webhook & { secret: string }>('POST', `/organizations/${org}/webhooks`, { url: data.get('url'), ...(events.length ? { events } : {}) });
      setSecret(r.secret);
      setSelected(r.endpoint_id);
      form.reset();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <>
      {secret ? <SecretOnce label="Signing secret of the new endpoint" secret={secret} onDone={() => setSecret(undefined)} /> : null}
      <form className="card" onSubmit={create} aria-labelledby="hook-new">
        <h2 id="hook-new">Register an endpoint</h2>
        <Field id="hook-url" label="URL">
          <input id="hook-url" name="url" type="url" required placeholder="https://app.example/webhooks/keyhall" />
        </Field>
        <Field id="hook-events" label="Event types (optional, comma-separated; empty: all)">
          <input id="hook-events" name="events" placeholder="member.added, api_key.created" />
        </Field>
        <ErrorNote error={error} />
        <button type="submit" className="primary">
          Register endpoint
        </button>
      </form>
      <section aria-labelledby="hook-list">
        <h2 id="hook-list">Endpoints</h2>
        {list.loading ? <Loading what="endpoints" /> : null}
        <ErrorNote error={list.error} />
        {list.data && list.data.data.length === 0 ? <Empty>No endpoints in this organization yet.</Empty> : null}
        <ul className="pick">
          {(list.data?.data ?? []).map((w) => (
            <li key={w.endpoint_id}>
              <button type="button" aria-pressed={w.endpoint_id === selected} onClick={() => setSelected(w.endpoint_id)}>
                <span className="mono">{w.url}</span> <span className="muted">{w.events.join(', ')}</span>
              </button>
              <ConfirmButton
                label="Delete"
                question="Delete this endpoint? Pending deliveries stop."
                confirmLabel="Yes, delete"
                onConfirm={async () => {
                  await api('DELETE', `/organizations/${org}/webhooks/${w.endpoint_id}`);
                  if (selected === w.endpoint_id) setSelected(undefined);
                  list.reload();
                }}
              />
            </li>
          ))}
        </ul>
      </section>
      {selected ? <Deliveries key={selected} org={org} endpoint={selected} /> : null}
    </>
  );
}

function Deliveries({ org, endpoint }: { org: string; endpoint: string }) {
  const log = useLoad(() => api<Page<Delivery>>('GET', `/organizations/${org}/webhooks/${endpoint}/deliveries?limit=50`), [org, endpoint]);
  const [error, setError] = useState<unknown>();
  const [note, setNote] = useState('');
  const replay = async (d: Delivery) => {
    setError(undefined);
    try {
      const r = await api<{ status: string }>('POST', `/organizations/${org}/webhooks/${endpoint}/deliveries/${d.id}/retry`);
      setNote(`Delivery ${d.id} queued again (${r.status}).`);
      log.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="hook-log">
      <h2 id="hook-log">Delivery log</h2>
      <button type="button" onClick={log.reload}>
        Refresh
      </button>
      <p role="status" className="muted">
        {note}
      </p>
      <ErrorNote error={error} />
      {log.loading ? <Loading what="deliveries" /> : null}
      <ErrorNote error={log.error} />
      {log.data && log.data.data.length === 0 ? <Empty>No deliveries to this endpoint yet.</Empty> : null}
      {log.data && log.data.data.length > 0 ? (
        <div className="table">
          <table>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Response</th>
                <th scope="col">Attempts</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {log.data.data.map((d) => {
                const last = d.attempts[d.attempts.length - 1];
                return (
                  <tr key={d.id} data-status={d.status}>
                    <td>{when(d.created_at)}</td>
                    <td>
                      <code>{d.event_type}</code>
                    </td>
                    <td>
                      <span className={`badge ${d.status}`}>{d.status}</span>
                    </td>
                    <td>{last ? (last.status_code ?? last.error ?? '—') : '—'}</td>
                    <td>{d.attempts.length}</td>
                    <td>
                      {d.status === 'failed' ? (
                        <button type="button" onClick={() => replay(d)}>
                          Replay
                        </button>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
