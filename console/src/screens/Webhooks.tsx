import { useState } from 'react';
import { call, client } from '../api';
import { FormCard, useAction, useSubmit } from '../components/forms';
import { DataTable, Loaded, PickList } from '../components/lists';
import { OrganizationScope } from '../components/organizations';
import { ErrorNote, Field, SecretOnce, useLoad, when } from '../ui';

export function Webhooks() {
  return (
    <OrganizationScope id="hook-org" empty="Webhooks belong to organizations: create an organization first.">
      {(org) => <Endpoints key={org} org={org} />}
    </OrganizationScope>
  );
}

function Endpoints({ org }: { org: string }) {
  const list = useLoad(() => call(client.GET('/organizations/{orgId}/webhooks', { params: { path: { orgId: org }, query: { limit: 100 } } })), [org]);
  const [secret, setSecret] = useState<string>();
  const [selected, setSelected] = useState<string>();

  const create = useSubmit(
    async (data) => {
      const events = String(data.get('events') ?? '')
        .split(/[\s,]+/)
        .filter(Boolean);
      const r = await call(
        client.POST('/organizations/{orgId}/webhooks', {
          params: { path: { orgId: org } },
          body: { url: String(data.get('url') ?? ''), ...(events.length ? { events } : {}) },
        }),
      );
      setSecret(r.secret);
      setSelected(r.endpoint_id);
      list.reload();
    },
    { reset: true },
  );

  return (
    <>
      {secret ? <SecretOnce label="Signing secret of the new endpoint" secret={secret} onDone={() => setSecret(undefined)} /> : null}
      <FormCard id="hook-new" title="Register an endpoint" submit="Register endpoint" form={create}>
        <Field id="hook-url" label="URL">
          <input id="hook-url" name="url" type="url" required placeholder="https://app.example/webhooks/keyhall" />
        </Field>
        <Field id="hook-events" label="Event types (optional, comma-separated; empty: all)">
          <input id="hook-events" name="events" placeholder="member.added, api_key.created" />
        </Field>
      </FormCard>
      <section aria-labelledby="hook-list">
        <h2 id="hook-list">Endpoints</h2>
        <Loaded state={list} rows={list.data?.data} what="endpoints" empty="No endpoints in this organization yet.">
          {(rows) => (
            <PickList
              rows={rows}
              rowKey={(w) => w.endpoint_id}
              selected={selected}
              onPick={setSelected}
              remove={{
                label: 'Delete',
                confirmLabel: 'Yes, delete',
                question: () => 'Delete this endpoint? Pending deliveries stop.',
                run: async (w) => {
                  await call(client.DELETE('/organizations/{orgId}/webhooks/{webhookId}', { params: { path: { orgId: org, webhookId: w.endpoint_id } } }));
                  list.reload();
                },
              }}
            >
              {(w) => (
                <>
                  <span className="mono">{w.url}</span> <span className="muted">{w.events.join(', ')}</span>
                </>
              )}
            </PickList>
          )}
        </Loaded>
      </section>
      {selected ? <Deliveries key={selected} org={org} endpoint={selected} /> : null}
    </>
  );
}

function Deliveries({ org, endpoint }: { org: string; endpoint: string }) {
  const log = useLoad(
    () =>
      call(
        client.GET('/organizations/{orgId}/webhooks/{webhookId}/deliveries', { params: { path: { orgId: org, webhookId: endpoint }, query: { limit: 50 } } }),
      ),
    [org, endpoint],
  );
  const replay = useAction();
  const [note, setNote] = useState('');
  return (
    <section aria-labelledby="hook-log">
      <h2 id="hook-log">Delivery log</h2>
      <button type="button" onClick={log.reload}>
        Refresh
      </button>
      <p role="status" className="muted">
        {note}
      </p>
      <ErrorNote error={replay.error} />
      <Loaded state={log} rows={log.data?.data} what="deliveries" empty="No deliveries to this endpoint yet.">
        {(rows) => (
          <DataTable
            columns={['Created', 'Event', 'Status', 'Response', 'Attempts', { hidden: 'Actions' }]}
            rows={rows}
            rowKey={(d) => d.id}
            rowProps={(d) => ({ 'data-status': d.status })}
          >
            {(d) => {
              const last = d.attempts[d.attempts.length - 1];
              return (
                <>
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
                      <button
                        type="button"
                        onClick={() =>
                          replay.run(async () => {
                            const r = await call(
                              client.POST('/organizations/{orgId}/webhooks/{webhookId}/deliveries/{deliveryId}/retry', {
                                params: { path: { orgId: org, webhookId: endpoint, deliveryId: d.id } },
                              }),
                            );
                            setNote(`Delivery ${d.id} queued again (${r.status}).`);
                            log.reload();
                          })
                        }
                      >
                        Replay
                      </button>
                    ) : null}
                  </td>
                </>
              );
            }}
          </DataTable>
        )}
      </Loaded>
    </section>
  );
}
