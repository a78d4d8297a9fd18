import { useState } from 'react';
import { ACCOUNT_LINKING, type Answer, type Body, call, client, SOCIAL_AUTH_METHODS, SOCIAL_PRESETS } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { LoadStatus, Loaded, PickList } from '../components/lists';
import { Field, useLoad } from '../ui';
import { Fact, words } from './feature-kit';

type Connection = Answer<'/social_connections/{connectionId}', 'get'>;
type CreateBody = Body<'/social_connections', 'post'>;
type PatchBody = Body<'/social_connections/{connectionId}', 'patch'>;
type Linking = (typeof ACCOUNT_LINKING)[number];
type Preset = (typeof SOCIAL_PRESETS)[number];
/** What a new connection talks to: a preset, any OpenID provider, or any OAuth 2.0 provider. */
type Kind = `preset:${Preset}` | 'oidc' | 'oauth2';

const LINKING_LABELS: Record<Linking, string> = {
  verified_email: 'Link a new identity to the user with the same email when both the provider and Keyhall verified it',
  manual: 'Never link automatically (a user links an identity while signed in)',
};
const FIELDS = ['subject', 'email', 'email_verified', 'name', 'picture'] as const;

/** Social sign-in (docs/social.md): the tenant's connections on the hosted login and its account-linking setting. */
export function Social() {
  const list = useLoad(() => call(client.GET('/social_connections', { params: { query: { limit: 100 } } })), []);
  const [selected, setSelected] = useState<string>();
  const [note, setNote] = useState('');
  // The login page's order: display_order, then the oldest first.
  const rows = list.data?.data.slice().sort((a, b) => a.display_order - b.display_order || a.created_at.localeCompare(b.created_at));
  const chosen = rows?.find((c) => c.id === selected);
  return (
    <>
      <LinkingSettings />
      <ConnectionForm
        onSaved={(c) => {
          setNote(`Connection ${c.name} created. Register its redirect URI at the provider.`);
          setSelected(c.id);
          list.reload();
        }}
      />
      <section aria-labelledby="social-list">
        <h2 id="social-list">Connections</h2>
        <p role="status" className="muted">
          {note}
        </p>
        <Loaded state={list} rows={rows} what="social connections" empty="No social connections yet.">
          {(all) => (
            <PickList
              rows={all}
              rowKey={(c) => c.id}
              selected={selected}
              onPick={(id) => setSelected(id === selected ? undefined : id)}
              remove={{
                label: 'Delete',
                confirmLabel: 'Yes, delete',
                question: (c) => `Delete the connection ${c.name}? Its linked identities go with it (the users stay).`,
                run: async (c) => {
                  await call(client.DELETE('/social_connections/{connectionId}', { params: { path: { connectionId: c.id } } }));
                  setNote(`Connection ${c.name} deleted.`);
                  list.reload();
                },
              }}
            >
              {(c) => (
                <>
                  <strong>{c.name}</strong>{' '}
                  <span className="muted">
                    {c.preset ?? c.kind} · order {c.display_order} · {c.sign_in ? 'sign-in' : 'no sign-in'} · {c.sign_up ? 'sign-up' : 'no sign-up'}
                  </span>
                </>
              )}
            </PickList>
          )}
        </Loaded>
      </section>
      {chosen ? (
        <section aria-labelledby="social-detail">
          <h2 id="social-detail">{chosen.name}</h2>
          <dl className="facts">
            <Fact label="Redirect URI (register it at the provider)" value={chosen.redirect_uri} />
            <Fact label="Client secret" value={chosen.has_client_secret ? 'set (never shown)' : 'none (a public client, PKCE only)'} />
            {chosen.issuer ? <Fact label="Issuer" value={chosen.issuer} /> : null}
            <Fact label="Authorization endpoint" value={chosen.authorization_endpoint} />
            <Fact label="Token endpoint" value={chosen.token_endpoint} />
            {chosen.userinfo_endpoint ? <Fact label="Userinfo endpoint" value={chosen.userinfo_endpoint} /> : null}
            <Fact label="Field paths" value={FIELDS.map((f) => `${f} = ${chosen.fields[f] ?? '—'}`).join(', ')} />
          </dl>
          <ConnectionForm
            key={chosen.updated_at}
            current={chosen}
            onSaved={(c) => {
              setNote(`Connection ${c.name} saved.`);
              list.reload();
            }}
          />
        </section>
      ) : null}
    </>
  );
}

function LinkingSettings() {
  const settings = useLoad(() => call(client.GET('/social_settings')), []);
  const form = useSubmit(async (f) => {
    await call(client.PUT('/social_settings', { body: { account_linking: f.get('account_linking') as Linking } }));
    settings.reload();
  });
  return (
    <FormCard id="social-linking" title="Account linking" submit="Save account linking" form={form} status={form.done ? 'Account linking saved.' : ''}>
      <LoadStatus state={settings} what="the account-linking setting" />
      {settings.data ? (
        <fieldset key={settings.data.updated_at ?? 'default'}>
          <legend>When someone signs in with a provider for the first time</legend>
          {ACCOUNT_LINKING.map((v) => (
            <label className="check" key={v}>
              <input type="radio" name="account_linking" value={v} defaultChecked={settings.data?.account_linking === v} /> {LINKING_LABELS[v]}
            </label>
          ))}
        </fieldset>
      ) : null}
    </FormCard>
  );
}

/** Create (no `current`) or edit a connection; the client secret is write-only (blank keeps it). The provider itself is fixed once made. */
function ConnectionForm({ current, onSaved }: { current?: Connection; onSaved: (c: Connection) => void }) {
  const id = current ? `soc-${current.id}` : 'soc-new';
  const [kind, setKind] = useState<Kind>(`preset:${SOCIAL_PRESETS[0]!}`);
  const form = useSubmit(
    async (f) => {
      const text = (k: string) => String(f.get(k) ?? '').trim();
      const order = Number(text('display_order') || '0');
      const common = {
        client_id: text('client_id'),
        scopes: words(text('scopes')),
        sign_in: f.get('sign_in') === 'on',
        sign_up: f.get('sign_up') === 'on',
        display_order: order,
      };
      const secret = String(f.get('client_secret') ?? '');
      if (current) {
        // Only what changed; a blank secret keeps the stored one.
        const body: PatchBody = {};
        if (text('name') !== current.name) body.name = text('name');
        if (common.client_id !== current.client_id) body.client_id = common.client_id;
        if (common.scopes.length && common.scopes.join(' ') !== current.scopes.join(' ')) body.scopes = common.scopes;
        if (common.sign_in !== current.sign_in) body.sign_in = common.sign_in;
        if (common.sign_up !== current.sign_up) body.sign_up = common.sign_up;
        if (order !== current.display_order) body.display_order = order;
        if (f.get('remove_secret') === 'on') body.client_secret = null;
        else if (secret) body.client_secret = secret;
        if (Object.keys(body).length === 0) throw new Error('Nothing changed.');
        onSaved(await call(client.PATCH('/social_connections/{connectionId}', { params: { path: { connectionId: current.id } }, body })));
        return;
      }
      const body: CreateBody = { ...common };
      if (!common.scopes.length) delete body.scopes;
      if (text('name')) body.name = text('name');
      if (secret) body.client_secret = secret;
      if (kind === 'oidc') body.oidc = { issuer: text('issuer') };
      else if (kind === 'oauth2') {
        const optional = (k: string) => text(k) || undefined;
        body.oauth2 = {
          authorization_endpoint: text('authorization_endpoint'),
          token_endpoint: text('token_endpoint'),
          userinfo_endpoint: text('userinfo_endpoint'),
          emails_endpoint: optional('emails_endpoint'),
          token_endpoint_auth_method: f.get('token_endpoint_auth_method') as (typeof SOCIAL_AUTH_METHODS)[number],
          pkce: f.get('pkce') === 'on',
          fields: {
            subject: text('field_subject'),
            email: optional('field_email'),
            email_verified: optional('field_email_verified'),
            name: optional('field_name'),
            picture: optional('field_picture'),
          },
        };
      } else body.preset = kind.slice('preset:'.length) as Preset;
      onSaved(await call(client.POST('/social_connections', { body })));
    },
    { reset: !current },
  );
  const preset = !current && kind.startsWith('preset:');
  return (
    <FormCard
      id={`${id}-title`}
      title={current ? `Edit ${current.name}` : 'Add a social connection'}
      heading={current ? 'h3' : 'h2'}
      submit={current ? 'Save connection' : 'Add connection'}
      form={form}
    >
      {current ? null : (
        <Field
          id={`${id}-kind`}
          label="Provider"
          hint="A preset knows a well-known provider's endpoints; any other OpenID provider is discovered from its issuer. Fixed once created."
        >
          <select id={`${id}-kind`} value={kind} onChange={(e) => setKind(e.target.value as Kind)} aria-describedby={`${id}-kind-hint`}>
            {SOCIAL_PRESETS.map((p) => (
              <option key={p} value={`preset:${p}`}>
                {p}
              </option>
            ))}
            <option value="oidc">Any OpenID Connect provider</option>
            <option value="oauth2">Any OAuth 2.0 provider (endpoints and field paths)</option>
          </select>
        </Field>
      )}
      <Field id={`${id}-name`} label={preset ? 'Button name (optional)' : 'Button name'}>
        <input id={`${id}-name`} name="name" required={!current && !preset} maxLength={100} defaultValue={current?.name} placeholder="Sign in with Acme" />
      </Field>
      {!current && kind === 'oidc' ? (
        <Field id={`${id}-issuer`} label="Issuer">
          <input id={`${id}-issuer`} name="issuer" type="url" required placeholder="https://login.example.com" />
        </Field>
      ) : null}
      {!current && kind === 'oauth2' ? <OAuth2Fields id={id} /> : null}
      <Field id={`${id}-client`} label="Client ID">
        <input id={`${id}-client`} name="client_id" required={!current} maxLength={255} defaultValue={current?.client_id} autoComplete="off" />
      </Field>
      <Field
        id={`${id}-secret`}
        label={current ? `Client secret (${current.has_client_secret ? 'set' : 'not set'}; blank keeps it)` : 'Client secret'}
        hint="Write-only: stored sealed and never shown again."
      >
        <input id={`${id}-secret`} name="client_secret" type="password" autoComplete="new-password" maxLength={4096} aria-describedby={`${id}-secret-hint`} />
      </Field>
      {current?.has_client_secret ? (
        <label className="check">
          <input type="checkbox" name="remove_secret" /> Remove the client secret (a public client, PKCE only)
        </label>
      ) : null}
      <Field id={`${id}-scopes`} label="Scopes (space-separated; blank: the provider's defaults)">
        <input id={`${id}-scopes`} name="scopes" defaultValue={current?.scopes.join(' ')} placeholder="openid email profile" />
      </Field>
      <label className="check">
        <input type="checkbox" name="sign_in" defaultChecked={current?.sign_in ?? true} /> Sign-in (users with a linked identity sign in with it)
      </label>
      <label className="check">
        <input type="checkbox" name="sign_up" defaultChecked={current?.sign_up ?? true} /> Sign-up (an unknown identity creates a user)
      </label>
      <Field id={`${id}-order`} label="Order on the login page (0–1000, lowest first)">
        <input id={`${id}-order`} name="display_order" type="number" min={0} max={1000} step={1} defaultValue={current?.display_order ?? 0} />
      </Field>
    </FormCard>
  );
}

/** A generic OAuth 2.0 provider: its endpoints and where its userinfo document keeps each attribute. */
function OAuth2Fields({ id }: { id: string }) {
  return (
    <fieldset>
      <legend>OAuth 2.0 provider</legend>
      <Field id={`${id}-authz`} label="Authorization endpoint">
        <input id={`${id}-authz`} name="authorization_endpoint" type="url" required />
      </Field>
      <Field id={`${id}-token`} label="Token endpoint">
        <input id={`${id}-token`} name="token_endpoint" type="url" required />
      </Field>
      <Field id={`${id}-userinfo`} label="Userinfo endpoint">
        <input id={`${id}-userinfo`} name="userinfo_endpoint" type="url" required />
      </Field>
      <Field id={`${id}-emails`} label="Emails endpoint (optional; GitHub's /user/emails shape)">
        <input id={`${id}-emails`} name="emails_endpoint" type="url" />
      </Field>
      <Field id={`${id}-auth`} label="Client authentication at the token endpoint">
        <select id={`${id}-auth`} name="token_endpoint_auth_method" defaultValue={SOCIAL_AUTH_METHODS[0]}>
          {SOCIAL_AUTH_METHODS.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      </Field>
      <label className="check">
        <input type="checkbox" name="pkce" defaultChecked /> PKCE
      </label>
      {FIELDS.map((f) => (
        <Field key={f} id={`${id}-field-${f}`} label={`Field path of ${f}${f === 'subject' ? '' : ' (optional)'}`}>
          <input id={`${id}-field-${f}`} name={`field_${f}`} required={f === 'subject'} maxLength={200} placeholder={f === 'subject' ? 'id' : ''} />
        </Field>
      ))}
    </fieldset>
  );
}
