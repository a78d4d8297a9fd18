import { useEffect, useRef, useState } from 'react';
import { type Body, call, CLIENT_AUTH_METHODS, client as v1, GRANT_TYPES, ID_TOKEN_ALGS, type OAuthClient, type ResourceServer } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { DataTable, Loaded } from '../components/lists';
import { ConfirmButton, Field, SecretOnce, useLoad } from '../ui';

type Client = OAuthClient;
type ClientBody = Body<'/clients/{clientId}', 'patch'>;
type GrantType = (typeof GRANT_TYPES)[number];
type AuthMethod = (typeof CLIENT_AUTH_METHODS)[number];

const KINDS = {
  web: {
    label: 'Web app with a server (confidential, client_secret_basic)',
    body: { token_endpoint_auth_method: 'client_secret_basic', grant_types: ['authorization_code', 'refresh_token'] },
  },
  spa: {
    label: 'Single-page or native app (public, PKCE)',
    body: { token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] },
  },
  machine: {
    label: 'Machine to machine (client_credentials)',
    body: { token_endpoint_auth_method: 'client_secret_basic', grant_types: ['client_credentials'] },
  },
} as const;

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange' satisfies GrantType;
/** The grants the server offers (GRANT_TYPES), described. */
const GRANT_LABELS: Record<GrantType, string> = {
  authorization_code: 'Authorization code (sign-in with PKCE)',
  refresh_token: 'Refresh token',
  client_credentials: 'Client credentials (machine to machine)',
  [TOKEN_EXCHANGE]: 'Token exchange (RFC 8693)',
  'urn:ietf:params:oauth:grant-type:pre-authorized_code': 'Pre-authorized code (credential issuance)',
  'urn:ietf:params:oauth:grant-type:device_code': 'Device code (RFC 8628: TVs, command lines, devices without a browser)',
};
/** The authentication methods whose client has a secret to rotate. */
const SECRET_METHODS = new Set(['client_secret_basic', 'client_secret_post']);
/** The token_endpoint_auth_method values the server offers (docs/oauth.md, "Client authentication"), described. */
const AUTH_METHOD_LABELS: Record<AuthMethod, string> = {
  client_secret_basic: 'Client secret in HTTP Basic (client_secret_basic)',
  client_secret_post: 'Client secret in the request body (client_secret_post)',
  private_key_jwt: 'Assertion signed with its own key (private_key_jwt)',
  none: 'None: a public client, PKCE (none)',
};

/** The JWKS textarea as JSON; the server checks the keys themselves (public, unique kid). */
function parseJwks(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`The JWKS is not valid JSON (${(err as Error).message}).`);
  }
}

const lines = (v: FormDataEntryValue | null) =>
  String(v ?? '')
    .split(/\s+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** OAuth clients and resource servers (APIs). */
export function Applications() {
  return (
    <>
      <Clients />
      <ResourceServers />
    </>
  );
}

function Clients() {
  const list = useLoad(() => call(v1.GET('/clients', { params: { query: { limit: 100 } } })), []);
  const [secret, setSecret] = useState<{ label: string; secret: string }>();
  // A new secret shows above the list: focus moves there so it is seen (and read out) wherever the button was.
  const secretBox = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (secret) secretBox.current?.focus();
  }, [secret]);
  const [editing, setEditing] = useState<string>();
  const edited = list.data?.data.find((c) => c.client_id === editing);
  const create = useSubmit(
    async (data) => {
      const kind = KINDS[String(data.get('kind')) as keyof typeof KINDS];
      const redirects = lines(data.get('redirect_uris'));
      const c = await call(
        v1.POST('/clients', {
          body: {
            client_name: String(data.get('client_name') ?? ''),
            ...kind.body,
            grant_types: [...kind.body.grant_types],
            ...(redirects.length ? { redirect_uris: redirects } : {}),
          },
        }),
      );
      if (c.client_secret) setSecret({ label: `Client secret of ${c.client_id}`, secret: c.client_secret });
      list.reload();
    },
    { reset: true },
  );
  return (
    <section aria-labelledby="clients">
      <h2 id="clients">OAuth clients</h2>
      {secret ? (
        <div ref={secretBox} tabIndex={-1}>
          <SecretOnce label={secret.label} secret={secret.secret} onDone={() => setSecret(undefined)} />
        </div>
      ) : null}
      <FormCard id="client-new" title="Register a client" heading="h3" submit="Register client" form={create}>
        <Field id="client-name" label="Name">
          <input id="client-name" name="client_name" required maxLength={200} />
        </Field>
        <Field id="client-kind" label="Kind">
          <select id="client-kind" name="kind" defaultValue="web">
            {Object.entries(KINDS).map(([k, v]) => (
              <option key={k} value={k}>
                {v.label}
              </option>
            ))}
          </select>
        </Field>
        <Field id="client-redirects" label="Redirect URIs (one per line; not for machine to machine)">
          <textarea id="client-redirects" name="redirect_uris" rows={2} className="mono" placeholder="https://app.example/callback" />
        </Field>
      </FormCard>
      <Loaded state={list} rows={list.data?.data} what="clients" empty="No OAuth clients yet.">
        {(rows) => (
          <DataTable columns={['Name', 'Client id', 'Grants', 'Authentication', { hidden: 'Actions' }]} rows={rows} rowKey={(c) => c.client_id}>
            {(c) => {
              const name = c.client_name ?? c.client_id;
              return (
                <>
                  <td>{c.client_name ?? '—'}</td>
                  <td>
                    <code>{c.client_id}</code>
                  </td>
                  <td>{c.grant_types.join(', ')}</td>
                  <td>{c.token_endpoint_auth_method}</td>
                  <td>
                    <span className="actions">
                      <button
                        type="button"
                        aria-expanded={editing === c.client_id}
                        onClick={() => setEditing(editing === c.client_id ? undefined : c.client_id)}
                      >
                        Edit<span className="visually-hidden"> {name}</span>
                      </button>
                      {SECRET_METHODS.has(c.token_endpoint_auth_method) ? (
                        <ConfirmButton
                          label="Rotate secret"
                          question={`Rotate the secret of ${name}? The current secret stops working at once.`}
                          confirmLabel="Yes, rotate"
                          onConfirm={async () => {
                            const r = await call(v1.POST('/clients/{clientId}/secret', { params: { path: { clientId: c.client_id } } }));
                            if (r.client_secret) setSecret({ label: `New client secret of ${c.client_id}`, secret: r.client_secret });
                          }}
                        />
                      ) : null}
                      <ConfirmButton
                        label="Delete"
                        question={`Delete ${name}? Its tokens stop working.`}
                        confirmLabel="Yes, delete"
                        onConfirm={async () => {
                          await call(v1.DELETE('/clients/{clientId}', { params: { path: { clientId: c.client_id } } }));
                          if (editing === c.client_id) setEditing(undefined);
                          list.reload();
                        }}
                      />
                    </span>
                  </td>
                </>
              );
            }}
          </DataTable>
        )}
      </Loaded>
      {edited ? (
        <ClientEditor
          key={edited.client_id}
          client={edited}
          onClose={() => setEditing(undefined)}
          onSaved={(saved) => {
            if (saved.client_secret) setSecret({ label: `New client secret of ${saved.client_id}`, secret: saved.client_secret });
            list.reload();
          }}
        />
      ) : null}
    </section>
  );
}

/**
 * What PATCH /clients/{id} accepts. The keys (`jwks` or `jwks_uri`, one clearing the other) are
 * sent only with private_key_jwt; a secret issued by a move to a secret method is shown once by the parent.
 */
function ClientEditor({ client, onClose, onSaved }: { client: Client; onClose: () => void; onSaved: (saved: Client) => void }) {
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const id = (name: string) => `client-edit-${name}`;
  const [method, setMethod] = useState(client.token_endpoint_auth_method);
  const [keySource, setKeySource] = useState<'jwks' | 'jwks_uri'>(client.jwks_uri ? 'jwks_uri' : 'jwks');
  const save = useSubmit(async (data) => {
    const auth: ClientBody = { token_endpoint_auth_method: method as AuthMethod };
    if (method === 'private_key_jwt') {
      if (keySource === 'jwks_uri') Object.assign(auth, { jwks: null, jwks_uri: String(data.get('jwks_uri') ?? '').trim() });
      // The server checks the keys themselves.
      else Object.assign(auth, { jwks: parseJwks(String(data.get('jwks') ?? '')) as ClientBody['jwks'], jwks_uri: null });
    }
    const grants = data.getAll('grant_types').map((g) => String(g) as GrantType);
    const subjects = lines(data.get('te_subject_clients'));
    const audiences = lines(data.get('te_audiences'));
    const scope = lines(data.get('scope')).join(' ');
    const name = String(data.get('client_name') ?? '').trim();
    const saved = await call(
      v1.PATCH('/clients/{clientId}', {
        params: { path: { clientId: client.client_id } },
        body: {
          ...(name ? { client_name: name } : {}),
          ...auth,
          redirect_uris: lines(data.get('redirect_uris')),
          post_logout_redirect_uris: lines(data.get('post_logout_redirect_uris')),
          allowed_origins: lines(data.get('allowed_origins')),
          allowed_resources: lines(data.get('allowed_resources')),
          grant_types: grants,
          scope: scope || null,
          // A policy only with the grant; no lists at all: no policy.
          token_exchange: grants.includes(TOKEN_EXCHANGE) && (subjects.length > 0 || audiences.length > 0) ? { subject_clients: subjects, audiences } : null,
          id_token_signed_response_alg: data.get('id_token_signed_response_alg') as (typeof ID_TOKEN_ALGS)[number],
          require_pushed_authorization_requests: data.get('require_par') === 'on',
          dpop_bound_access_tokens: data.get('dpop') === 'on',
          third_party: data.get('third_party') === 'on',
        },
      }),
    );
    onSaved(saved);
  });
  // The document leaves the Client schema's token_exchange untyped; it is what a PATCH sets.
  const te = client.token_exchange as ClientBody['token_exchange'];
  return (
    <section className="detail" id="client-edit" aria-label={`Settings of ${client.client_name ?? client.client_id}`}>
      <FormCard
        id={id('title')}
        title={`Edit ${client.client_name ?? client.client_id}`}
        heading="h3"
        submit="Save changes"
        form={save}
        status={save.done ? 'Saved.' : ''}
      >
        <p className="muted">
          <code>{client.client_id}</code>
        </p>
        <Field id={id('name')} label="Name">
          <input ref={first} id={id('name')} name="client_name" maxLength={200} defaultValue={client.client_name ?? ''} />
        </Field>
        <fieldset>
          <legend>Client authentication at /token</legend>
          <Field
            id={id('method')}
            label="Authentication method"
            hint="Moving to a secret method issues a new secret (shown once); moving away from one ends the current secret."
          >
            <select
              id={id('method')}
              name="token_endpoint_auth_method"
              value={method}
              onChange={(e) => setMethod(e.target.value)}
              aria-describedby={id('method-hint')}
            >
              {CLIENT_AUTH_METHODS.map((m) => (
                <option key={m} value={m}>
                  {AUTH_METHOD_LABELS[m]}
                </option>
              ))}
            </select>
          </Field>
          {method === 'private_key_jwt' ? (
            <fieldset>
              <legend>Its public keys</legend>
              <label className="check">
                <input type="radio" name="key_source" value="jwks" checked={keySource === 'jwks'} onChange={() => setKeySource('jwks')} /> A key set (JWKS)
                given here
              </label>
              <label className="check">
                <input type="radio" name="key_source" value="jwks_uri" checked={keySource === 'jwks_uri'} onChange={() => setKeySource('jwks_uri')} /> A key set
                fetched from a URL (jwks_uri)
              </label>
              {keySource === 'jwks' ? (
                <Field id={id('jwks')} label='JWKS: public keys only, as JSON {"keys": [...]}'>
                  <textarea
                    id={id('jwks')}
                    name="jwks"
                    rows={6}
                    className="mono"
                    required
                    spellCheck={false}
                    defaultValue={client.jwks ? JSON.stringify(client.jwks, null, 2) : ''}
                  />
                </Field>
              ) : (
                <Field id={id('jwks-uri')} label="JWKS URL (https)">
                  <input
                    id={id('jwks-uri')}
                    name="jwks_uri"
                    type="url"
                    className="mono"
                    required
                    placeholder="https://app.example/jwks.json"
                    defaultValue={client.jwks_uri ?? ''}
                  />
                </Field>
              )}
            </fieldset>
          ) : null}
        </fieldset>
        <Field id={id('redirects')} label="Redirect URIs (one per line)">
          <textarea id={id('redirects')} name="redirect_uris" rows={3} className="mono" defaultValue={client.redirect_uris.join('\n')} />
        </Field>
        <Field id={id('logout')} label="Post-logout redirect URIs (one per line)">
          <textarea id={id('logout')} name="post_logout_redirect_uris" rows={2} className="mono" defaultValue={client.post_logout_redirect_uris.join('\n')} />
        </Field>
        <Field id={id('origins')} label="Allowed browser origins: CORS on /token, /revoke and /userinfo (one per line)">
          <textarea
            id={id('origins')}
            name="allowed_origins"
            rows={2}
            className="mono"
            placeholder="https://app.example"
            defaultValue={client.allowed_origins.join('\n')}
          />
        </Field>
        <fieldset>
          <legend>Grant types</legend>
          {GRANT_TYPES.map((g) => (
            <label key={g} className="check">
              <input type="checkbox" name="grant_types" value={g} defaultChecked={client.grant_types.includes(g)} /> {GRANT_LABELS[g]}
            </label>
          ))}
        </fieldset>
        <Field id={id('scope')} label="Allowed scopes (space-separated; empty: no restriction)">
          <input id={id('scope')} name="scope" className="mono" defaultValue={client.scope ?? ''} />
        </Field>
        <Field id={id('resources')} label="Allowed resources: audience URIs (one per line)">
          <textarea id={id('resources')} name="allowed_resources" rows={2} className="mono" defaultValue={client.allowed_resources.join('\n')} />
        </Field>
        <fieldset>
          <legend>Token exchange (needs the token-exchange grant)</legend>
          <Field id={id('te-subjects')} label="Subject clients whose access tokens it may exchange (client ids, one per line; * for any)">
            <textarea id={id('te-subjects')} name="te_subject_clients" rows={2} className="mono" defaultValue={te?.subject_clients?.join('\n') ?? ''} />
          </Field>
          <Field id={id('te-audiences')} label="Audiences it may obtain (one per line)">
            <textarea id={id('te-audiences')} name="te_audiences" rows={2} className="mono" defaultValue={te?.audiences?.join('\n') ?? ''} />
          </Field>
        </fieldset>
        <Field id={id('alg')} label="ID token signing algorithm">
          <select id={id('alg')} name="id_token_signed_response_alg" defaultValue={client.id_token_signed_response_alg}>
            {ID_TOKEN_ALGS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </Field>
        <label className="check">
          <input type="checkbox" name="require_par" defaultChecked={client.require_pushed_authorization_requests} /> Require pushed authorization requests (PAR)
        </label>
        <label className="check">
          <input type="checkbox" name="dpop" defaultChecked={client.dpop_bound_access_tokens} /> DPoP-bound access tokens only
        </label>
        <label className="check">
          <input type="checkbox" name="third_party" defaultChecked={client.third_party} /> Third-party application (users are asked for consent)
        </label>
      </FormCard>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </section>
  );
}

function ResourceServers() {
  const list = useLoad(() => call(v1.GET('/resource_servers', { params: { query: { limit: 100 } } })), []);
  const [editing, setEditing] = useState<string>();
  const edited = list.data?.data.find((rs) => rs.id === editing);
  const create = useSubmit(
    async (data) => {
      const scopes = lines(data.get('scopes'));
      await call(
        v1.POST('/resource_servers', {
          body: { name: String(data.get('name') ?? ''), identifier: String(data.get('identifier') ?? ''), ...(scopes.length ? { scopes } : {}) },
        }),
      );
      list.reload();
    },
    { reset: true },
  );
  return (
    <section aria-labelledby="apis">
      <h2 id="apis">Resource servers (APIs)</h2>
      <FormCard id="rs-new" title="Register an API" heading="h3" submit="Register API" form={create}>
        <Field id="rs-name" label="Name">
          <input id="rs-name" name="name" required maxLength={200} />
        </Field>
        <Field id="rs-identifier" label="Identifier (the audience URI)">
          <input id="rs-identifier" name="identifier" required placeholder="https://api.example" />
        </Field>
        <Field id="rs-scopes" label="Scopes (space-separated, optional)">
          <input id="rs-scopes" name="scopes" placeholder="read:orders write:orders" />
        </Field>
      </FormCard>
      <Loaded state={list} rows={list.data?.data} what="resource servers" empty="No resource servers yet.">
        {(rows) => (
          <ul className="pick">
            {rows.map((rs) => (
              <li key={rs.id}>
                <span className="grow">
                  <strong>{rs.name}</strong> <code>{rs.identifier}</code> <span className="muted">{rs.scopes.join(' ')}</span>
                </span>
                <button type="button" aria-expanded={editing === rs.id} onClick={() => setEditing(editing === rs.id ? undefined : rs.id)}>
                  Edit<span className="visually-hidden"> {rs.name}</span>
                </button>
                <ConfirmButton
                  label="Delete"
                  question={`Delete ${rs.name}?`}
                  confirmLabel="Yes, delete"
                  onConfirm={async () => {
                    await call(v1.DELETE('/resource_servers/{rsId}', { params: { path: { rsId: rs.id } } }));
                    if (editing === rs.id) setEditing(undefined);
                    list.reload();
                  }}
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      {edited ? <ResourceServerEditor key={edited.id} rs={edited} onClose={() => setEditing(undefined)} onSaved={list.reload} /> : null}
    </section>
  );
}

/** PATCH /resource_servers/{id}: name, scopes, DPoP, token lifetime (the identifier stays: tokens name it). */
function ResourceServerEditor({ rs, onClose, onSaved }: { rs: ResourceServer; onClose: () => void; onSaved: () => void }) {
  const id = (name: string) => `rs-edit-${name}`;
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const save = useSubmit(async (data) => {
    const ttl = String(data.get('ttl') ?? '').trim();
    await call(
      v1.PATCH('/resource_servers/{rsId}', {
        params: { path: { rsId: rs.id } },
        body: {
          name: String(data.get('name') ?? '').trim(),
          scopes: lines(data.get('scopes')),
          dpop_required: data.get('dpop_required') === 'on',
          access_token_ttl_seconds: ttl === '' ? null : Number(ttl),
        },
      }),
    );
    onSaved();
  });
  return (
    <section className="detail" id="rs-edit" aria-label={`Settings of ${rs.name}`}>
      <FormCard id={id('title')} title={`Edit ${rs.name}`} heading="h3" submit="Save" form={save} status={save.done ? 'Saved.' : ''}>
        <p className="muted">
          <code>{rs.identifier}</code>
        </p>
        <Field id={id('name')} label="Name">
          <input ref={first} id={id('name')} name="name" required maxLength={200} defaultValue={rs.name} />
        </Field>
        <Field id={id('scopes')} label="Scopes (space-separated)">
          <input id={id('scopes')} name="scopes" className="mono" defaultValue={rs.scopes.join(' ')} />
        </Field>
        <Field id={id('ttl')} label="Access token lifetime in seconds (empty: the tenant's default)">
          <input id={id('ttl')} name="ttl" type="number" min={30} max={86400} defaultValue={rs.access_token_ttl_seconds ?? ''} />
        </Field>
        <label className="check">
          <input type="checkbox" name="dpop_required" defaultChecked={rs.dpop_required} /> Require DPoP-bound tokens
        </label>
      </FormCard>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </section>
  );
}
