import { useState } from 'react';
import { type Answer, type Body, call, client, CONNECT_AUTH_METHODS, CONNECT_PRESETS, CONNECT_PROVIDER_TYPES, CONNECTED_ACCOUNT_STATUSES } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { Loaded, LoadedItem, Pager, PickList } from '../components/lists';
import { OrganizationScope } from '../components/organizations';
import { Field, useLoad, when, whenSeconds } from '../ui';
import { Fact, pairLines, pairs, usePage, words } from './feature-kit';

type Provider = Answer<'/connect/providers/{providerId}', 'get'>;
type ProviderType = (typeof CONNECT_PROVIDER_TYPES)[number];
type AccountStatus = (typeof CONNECTED_ACCOUNT_STATUSES)[number];
const STATUS_LABELS: Record<AccountStatus, string> = { active: 'active', needs_reauthorization: 'needs to be connected again' };

/**
 * Upstream OAuth providers (tenant-wide) and each organization's connected accounts. Tokens are
 * never shown: retrieving one stays with API keys (the console gets 403).
 */
export function ConnectedAccounts() {
  const providers = usePage((page) => call(client.GET('/connect/providers', { params: { query: page } })), []);
  return (
    <>
      <Providers {...providers} />
      <section aria-labelledby="acct-title">
        <h2 id="acct-title">Connected accounts</h2>
        <p className="muted">
          The accounts users connected at an upstream through the hosted /connect page. Tokens stay in the vault: only API keys retrieve them.
        </p>
        <OrganizationScope id="acct-org" empty="Connected accounts belong to organizations: create an organization first.">
          {(org) => <Accounts key={org} org={org} providers={providers.list.data?.data ?? []} />}
        </OrganizationScope>
      </section>
    </>
  );
}

function Providers({ list, cursors }: ReturnType<typeof usePage<Provider>>) {
  const [selected, setSelected] = useState<string>();
  const [note, setNote] = useState('');
  const chosen = list.data?.data.find((p) => p.provider_id === selected);
  return (
    <>
      <ProviderForm
        onSaved={(p) => {
          setNote(`Provider ${p.name} registered. Register its redirect URI at the upstream.`);
          setSelected(p.provider_id);
          list.reload();
        }}
      />
      <section aria-labelledby="prov-list">
        <h2 id="prov-list">Providers</h2>
        <p role="status" className="muted">
          {note}
        </p>
        <Loaded state={list} rows={list.data?.data} what="providers" empty="No upstream providers yet.">
          {(rows) => (
            <PickList
              rows={rows}
              rowKey={(p) => p.provider_id}
              selected={selected}
              onPick={(id) => setSelected(id === selected ? undefined : id)}
              remove={{
                label: 'Delete',
                confirmLabel: 'Yes, delete',
                question: (p) => `Delete the provider ${p.name}?`,
                run: async (p) => {
                  await call(client.DELETE('/connect/providers/{providerId}', { params: { path: { providerId: p.provider_id } } }));
                  setNote(`Provider ${p.name} deleted.`);
                  list.reload();
                },
              }}
            >
              {(p) => (
                <>
                  <strong>{p.name}</strong>{' '}
                  <span className="muted">
                    {p.preset ?? p.type} · {p.client_id}
                  </span>
                </>
              )}
            </PickList>
          )}
        </Loaded>
        <Pager cursors={cursors} page={list.data} />
      </section>
      {chosen ? (
        <section aria-labelledby="prov-detail">
          <h2 id="prov-detail">{chosen.name}</h2>
          <dl className="facts">
            <Fact label="Redirect URI (register it at the upstream)" value={chosen.redirect_uri} />
            <Fact label="Client secret" value={chosen.has_client_secret ? 'set (never shown)' : 'none'} />
            {chosen.type === 'oidc' ? <Fact label="Endpoints (discovered)" value={`${chosen.authorization_endpoint} ${chosen.token_endpoint}`} /> : null}
          </dl>
          <ProviderForm
            key={chosen.updated_at}
            current={chosen}
            onSaved={(saved) => {
              setNote(`Provider ${saved.name} saved.`);
              list.reload();
            }}
          />
        </section>
      ) : null}
    </>
  );
}

/** Create (no `current`) or edit a provider; the client secret is write-only. */
function ProviderForm({ current, onSaved }: { current?: Provider; onSaved: (p: Provider) => void }) {
  const id = current ? `prov-${current.provider_id}` : 'prov-new';
  const [preset, setPreset] = useState('');
  const [type, setType] = useState<ProviderType>((current?.type as ProviderType | undefined) ?? 'oauth2');
  const [method, setMethod] = useState(current?.token_endpoint_auth_method ?? '');

  const form = useSubmit(
    async (f) => {
      const text = (k: string) => String(f.get(k) ?? '').trim();
      // Only the fields the form shows (an oidc provider's endpoints are discovered, not given).
      const fields = Object.fromEntries(
        ['name', 'issuer', 'authorization_endpoint', 'token_endpoint', 'revocation_endpoint', 'client_id'].filter((k) => f.has(k)).map((k) => [k, text(k)]),
      );
      const scopes = words(text('scopes'));
      const params = pairs(String(f.get('authorize_params') ?? ''), 'Extra authorization parameters');
      const pkce = f.get('pkce') === 'on';
      const secret = String(f.get('client_secret') ?? '');
      const body: Record<string, unknown> = {};
      if (!current) {
        // Blank fields are left out: a preset fills them.
        for (const [k, v] of Object.entries(fields)) if (v) body[k] = v;
        if (preset) body.preset = preset;
        else body.type = type;
        if (method) body.token_endpoint_auth_method = method;
        if (scopes.length) body.scopes = scopes;
        if (Object.keys(params).length) body.authorize_params = params;
        body.pkce = pkce;
        if (secret) body.client_secret = secret;
        // The form's fields, checked by the server (a preset fills what is left out).
        const saved = await call(client.POST('/connect/providers', { body: body as Body<'/connect/providers', 'post'> }));
        setPreset('');
        setType('oauth2');
        setMethod('');
        onSaved(saved);
        return;
      }
      // Only what changed; a blank optional URL clears it.
      const nullable = new Set(['issuer', 'revocation_endpoint']);
      for (const [k, v] of Object.entries(fields)) {
        const was = current[k as keyof Provider] as string | null;
        if (v === (was ?? '')) continue;
        if (!v && !nullable.has(k)) continue;
        body[k] = v || null;
      }
      if (type !== current.type) body.type = type;
      if (method !== current.token_endpoint_auth_method) body.token_endpoint_auth_method = method;
      if (scopes.join(' ') !== current.scopes.join(' ')) body.scopes = scopes;
      if (JSON.stringify(params) !== JSON.stringify(current.authorize_params)) body.authorize_params = params;
      if (pkce !== current.pkce) body.pkce = pkce;
      if (f.get('remove_secret') === 'on') body.client_secret = null;
      else if (secret) body.client_secret = secret;
      if (Object.keys(body).length === 0) throw new Error('Nothing changed.');
      onSaved(
        await call(
          client.PATCH('/connect/providers/{providerId}', {
            params: { path: { providerId: current.provider_id } },
            body: body as Body<'/connect/providers/{providerId}', 'patch'>,
          }),
        ),
      );
    },
    { reset: !current },
  );

  const oauth2 = !preset && type === 'oauth2';
  return (
    <FormCard
      id={`${id}-title`}
      title={current ? `Edit ${current.name}` : 'Register a provider'}
      heading={current ? 'h3' : 'h2'}
      submit={current ? 'Save provider' : 'Register provider'}
      form={form}
    >
      <Field id={`${id}-name`} label="Name">
        <input id={`${id}-name`} name="name" required={!current} maxLength={100} defaultValue={current?.name} placeholder="Google Calendar" />
      </Field>
      {current ? null : (
        <Field
          id={`${id}-preset`}
          label="Preset"
          hint="A preset fills the endpoints and defaults of a well-known upstream; fields you fill override it. It cannot be changed later."
        >
          <select id={`${id}-preset`} value={preset} onChange={(e) => setPreset(e.target.value)} aria-describedby={`${id}-preset-hint`}>
            <option value="">None (any OAuth 2.0 / OpenID Connect provider)</option>
            {CONNECT_PRESETS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </Field>
      )}
      {preset ? null : (
        <>
          <Field id={`${id}-type`} label="Type">
            <select id={`${id}-type`} value={type} onChange={(e) => setType(e.target.value as ProviderType)}>
              <option value="oauth2">OAuth 2.0 (endpoints given)</option>
              <option value="oidc">OpenID Connect (endpoints discovered from the issuer)</option>
            </select>
          </Field>
          <Field
            id={`${id}-issuer`}
            label={type === 'oidc' ? 'Issuer' : 'Issuer (optional)'}
            hint={type === 'oidc' ? undefined : 'When set, an iss in the authorization response must equal it.'}
          >
            <input
              id={`${id}-issuer`}
              name="issuer"
              type="url"
              required={type === 'oidc' && !current}
              defaultValue={current?.issuer ?? ''}
              aria-describedby={type === 'oidc' ? undefined : `${id}-issuer-hint`}
            />
          </Field>
        </>
      )}
      {oauth2 ? (
        <>
          <Field id={`${id}-authz`} label="Authorization endpoint">
            <input
              id={`${id}-authz`}
              name="authorization_endpoint"
              type="url"
              required={!current}
              defaultValue={current?.type === 'oauth2' ? current.authorization_endpoint : ''}
            />
          </Field>
          <Field id={`${id}-token`} label="Token endpoint">
            <input
              id={`${id}-token`}
              name="token_endpoint"
              type="url"
              required={!current}
              defaultValue={current?.type === 'oauth2' ? current.token_endpoint : ''}
            />
          </Field>
        </>
      ) : null}
      {oauth2 || preset ? (
        <Field id={`${id}-revoke`} label="Revocation endpoint (optional, RFC 7009)">
          <input
            id={`${id}-revoke`}
            name="revocation_endpoint"
            type="url"
            defaultValue={current?.type === 'oauth2' ? (current.revocation_endpoint ?? '') : ''}
          />
        </Field>
      ) : null}
      <Field id={`${id}-client`} label="Client ID">
        <input id={`${id}-client`} name="client_id" required={!current} maxLength={255} defaultValue={current?.client_id} autoComplete="off" />
      </Field>
      <Field
        id={`${id}-secret`}
        label={current ? 'New client secret (optional)' : 'Client secret'}
        hint={current ? 'Leave empty to keep the current one. It is stored encrypted and never shown again.' : 'Stored encrypted and never shown again.'}
      >
        <input id={`${id}-secret`} name="client_secret" type="password" autoComplete="new-password" maxLength={1000} aria-describedby={`${id}-secret-hint`} />
      </Field>
      {current?.has_client_secret ? (
        <label className="check">
          <input type="checkbox" name="remove_secret" /> Remove the client secret
        </label>
      ) : null}
      <Field id={`${id}-method`} label="Client authentication at the token endpoint">
        <select id={`${id}-method`} value={method} onChange={(e) => setMethod(e.target.value)}>
          {current ? null : <option value="">Default (client_secret_basic, or the preset&apos;s)</option>}
          {CONNECT_AUTH_METHODS.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      </Field>
      <Field id={`${id}-scopes`} label="Scopes (space-separated)" hint={current ? undefined : 'Empty: the preset’s defaults.'}>
        <input
          id={`${id}-scopes`}
          name="scopes"
          defaultValue={current?.scopes.join(' ')}
          aria-describedby={current ? undefined : `${id}-scopes-hint`}
          placeholder="openid email offline_access"
        />
      </Field>
      <Field id={`${id}-params`} label="Extra authorization parameters (one name = value a line)">
        <textarea
          id={`${id}-params`}
          name="authorize_params"
          rows={2}
          defaultValue={current ? pairLines(current.authorize_params) : ''}
          placeholder="access_type = offline"
        />
      </Field>
      <label className="check">
        <input type="checkbox" name="pkce" defaultChecked={current?.pkce ?? true} /> Use PKCE (S256)
      </label>
    </FormCard>
  );
}

function Accounts({ org, providers }: { org: string; providers: Provider[] }) {
  const [provider, setProvider] = useState('');
  const [status, setStatus] = useState('');
  const [selected, setSelected] = useState<string>();
  const { list, cursors } = usePage(
    (page) =>
      call(
        client.GET('/organizations/{orgId}/connect/accounts', {
          params: { path: { orgId: org }, query: { ...page, provider_id: provider || undefined, status: (status || undefined) as AccountStatus | undefined } },
        }),
      ),
    [org, provider, status],
  );
  const members = useLoad(() => call(client.GET('/organizations/{orgId}/members', { params: { path: { orgId: org }, query: { limit: 100 } } })), [org]);
  const emailOf = (userId: string) => members.data?.data.find((m) => m.user_id === userId)?.user?.email ?? userId;
  const nameOf = (providerId: string) => providers.find((p) => p.provider_id === providerId)?.name ?? providerId;
  return (
    <>
      <div className="filters">
        <Field id="acct-provider" label="Provider">
          <select
            id="acct-provider"
            value={provider}
            onChange={(e) => {
              setProvider(e.target.value);
              cursors.reset();
            }}
          >
            <option value="">All providers</option>
            {providers.map((p) => (
              <option key={p.provider_id} value={p.provider_id}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <Field id="acct-status" label="Status">
          <select
            id="acct-status"
            value={status}
            onChange={(e) => {
              setStatus(e.target.value);
              cursors.reset();
            }}
          >
            <option value="">Any status</option>
            {CONNECTED_ACCOUNT_STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABELS[s]}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <Loaded state={list} rows={list.data?.data} what="connected accounts" empty="No connected accounts here.">
        {(rows) => (
          <PickList
            rows={rows}
            rowKey={(a) => a.account_id}
            selected={selected}
            onPick={(id) => setSelected(id === selected ? undefined : id)}
            remove={{
              label: 'Disconnect',
              confirmLabel: 'Yes, disconnect',
              question: (a) => `Disconnect ${emailOf(a.user_id)}'s ${nameOf(a.provider_id)} account? Its tokens are revoked upstream where possible.`,
              run: async (a) => {
                await call(client.DELETE('/organizations/{orgId}/connect/accounts/{accountId}', { params: { path: { orgId: org, accountId: a.account_id } } }));
                list.reload();
              },
            }}
          >
            {(a) => (
              <>
                <strong>{nameOf(a.provider_id)}</strong> <span>{emailOf(a.user_id)}</span>{' '}
                <span className={`badge ${a.status === 'active' ? 'delivered' : 'failed'}`}>{a.status}</span>
              </>
            )}
          </PickList>
        )}
      </Loaded>
      <Pager cursors={cursors} page={list.data} />
      {selected ? <AccountDetail key={selected} org={org} id={selected} /> : null}
    </>
  );
}

function AccountDetail({ org, id }: { org: string; id: string }) {
  const account = useLoad(
    () => call(client.GET('/organizations/{orgId}/connect/accounts/{accountId}', { params: { path: { orgId: org, accountId: id } } })),
    [org, id],
  );
  return (
    <section aria-labelledby="acct-detail">
      <h3 id="acct-detail">Account {id}</h3>
      <LoadedItem state={account} what="the account">
        {(a) => (
          <dl className="facts">
            <Fact label="User" value={a.user_id} />
            <Fact label="Upstream subject" value={a.subject ?? '—'} />
            <Fact label="Scopes" value={a.scopes.join(' ') || '—'} />
            <Fact label="Status" value={a.status} />
            <Fact label="Access token expires" value={a.expires_at === null ? 'no expiry given' : whenSeconds(a.expires_at)} />
            <Fact label="Last refreshed" value={when(a.last_refreshed_at)} />
            <Fact label="Connected" value={when(a.created_at)} />
          </dl>
        )}
      </LoadedItem>
    </section>
  );
}
