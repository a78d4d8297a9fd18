import { type Answer, call, client } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { DataTable, Loaded, LoadStatus, Pager } from '../components/lists';
import { Field, useLoad, when } from '../ui';
import { usePage } from './feature-kit';

type Settings = Answer<'/email_settings', 'get'>;

/**
 * Email (docs/email.md): the tenant's sender and the outbox (recipient, template, status,
 * Message-ID — never a body or a link), with a banner while no SMTP server is configured.
 */
export function Email() {
  const settings = useLoad(() => call(client.GET('/email_settings')), []);
  const outbox = usePage((page) => call(client.GET('/email_outbox', { params: { query: page } })), []);
  return (
    <>
      {settings.data?.transport === 'dev_mailbox' ? (
        <p className="warning" role="note" data-banner="dev-mailbox">
          <strong>Mail is not being sent:</strong> no SMTP server is configured (<code>KEYHALL_SMTP_URL</code>), so messages land in the dev mailbox (the
          database and the server's log) instead of reaching anyone.
        </p>
      ) : null}
      <LoadStatus state={settings} what="the email settings" />
      {settings.data ? <Sender key={settings.data.updated_at ?? 'default'} settings={settings.data} onSaved={settings.reload} /> : null}
      <section aria-labelledby="outbox-title">
        <h2 id="outbox-title">Outbox</h2>
        <p className="muted">Newest first. A message's body and links are never shown, and are deleted once it is sent or has failed.</p>
        <p>
          <button type="button" onClick={outbox.list.reload}>
            Refresh
          </button>
        </p>
        <Loaded state={outbox.list} rows={outbox.list.data?.data} what="the outbox" empty="No emails yet.">
          {(rows) => (
            <DataTable
              columns={['Created', 'Recipient', 'Template', 'Status', 'Attempts', 'Message-ID', 'Sent']}
              rows={rows}
              rowKey={(e) => e.id}
              rowProps={(e) => ({ 'data-email': e.id })}
            >
              {(e) => (
                <>
                  <td>{when(e.created_at)}</td>
                  <td>{e.to}</td>
                  <td>{e.template}</td>
                  <td>
                    {e.status}
                    {e.last_error ? <span className="muted"> ({e.last_error})</span> : null}
                  </td>
                  <td>{e.attempts}</td>
                  <td>
                    <code className="data">{e.message_id}</code>
                  </td>
                  <td>
                    {when(e.sent_at)}
                    {e.transport ? <span className="muted"> via {e.transport}</span> : null}
                  </td>
                </>
              )}
            </DataTable>
          )}
        </Loaded>
        <Pager cursors={outbox.cursors} page={outbox.list.data} />
      </section>
    </>
  );
}

/** The sender (from address, display name, reply-to); a blank field restores the default. */
function Sender({ settings, onSaved }: { settings: Settings; onSaved: () => void }) {
  const form = useSubmit(async (f) => {
    const value = (k: string) => String(f.get(k) ?? '').trim() || null;
    await call(client.PUT('/email_settings', { body: { from_address: value('from_address'), from_name: value('from_name'), reply_to: value('reply_to') } }));
    onSaved();
  });
  return (
    <FormCard id="email-sender" title="Sender" submit="Save sender" form={form} status={form.done ? 'Sender saved.' : ''}>
      <Field id="email-from" label="From address" hint={`Blank: the default, ${settings.default_from}. Its domain's SPF and DKIM must allow your SMTP relay.`}>
        <input id="email-from" name="from_address" type="email" maxLength={254} defaultValue={settings.from_address ?? ''} aria-describedby="email-from-hint" />
      </Field>
      <Field id="email-name" label="From name (optional)">
        <input id="email-name" name="from_name" maxLength={100} defaultValue={settings.from_name ?? ''} placeholder="Acme" />
      </Field>
      <Field id="email-reply" label="Reply-to address (optional)">
        <input id="email-reply" name="reply_to" type="email" maxLength={254} defaultValue={settings.reply_to ?? ''} />
      </Field>
    </FormCard>
  );
}
