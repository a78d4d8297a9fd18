import { useState } from 'react';
import { type Body, call, client, type Item } from '../api';
import { RoleOptions, useRolesIn } from '../components/roles';
import { FormCard, useSubmit } from '../components/forms';
import { Loaded, Pager, PickList } from '../components/lists';
import { OrganizationScope } from '../components/organizations';
import { Field, when } from '../ui';
import { Fact, pairLines, pairs, usePage, words } from './feature-kit';

type Connection = Item<'/organizations/{orgId}/sso/connections'>;
type Protocol = Body<'/organizations/{orgId}/sso/connections', 'post'>['protocol'];
/** The claims (OIDC) or attributes (SAML) the form maps. */
type Mapping = NonNullable<Connection['oidc']>['claims'];

const MAPPED: Array<keyof Mapping> = ['email', 'name', 'groups'];

/** Per organization: its SSO connections (OIDC and SAML) and what the IdP needs to know. */
export function Sso() {
  return (
    <OrganizationScope id="sso-org" empty="SSO connections belong to organizations: create an organization first.">
      {(org) => <Connections key={org} org={org} />}
    </OrganizationScope>
  );
}

function Connections({ org }: { org: string }) {
  const { list, cursors } = usePage(
    (page) => call(client.GET('/organizations/{orgId}/sso/connections', { params: { path: { orgId: org }, query: page } })),
    [org],
  );
  const [selected, setSelected] = useState<string>();
  const [note, setNote] = useState('');
  const chosen = list.data?.data.find((c) => c.id === selected);
  return (
    <>
      <ConnectionForm
        org={org}
        onSaved={(c) => {
          setNote(`Connection ${c.name} created. Give the identity provider the values below.`);
          setSelected(c.id);
          list.reload();
        }}
      />
      <section aria-labelledby="sso-list">
        <h2 id="sso-list">Connections</h2>
        <p role="status" className="muted">
          {note}
        </p>
        <Loaded state={list} rows={list.data?.data} what="SSO connections" empty="No SSO connections in this organization.">
          {(rows) => (
            <PickList
              rows={rows}
              rowKey={(c) => c.id}
              selected={selected}
              onPick={(id) => setSelected(id === selected ? undefined : id)}
              remove={{
                label: 'Delete',
                confirmLabel: 'Yes, delete',
                question: (c) => `Delete ${c.name}? Its users and memberships stay; nobody can sign in through it any more.`,
                run: async (c) => {
                  await call(client.DELETE('/organizations/{orgId}/sso/connections/{connectionId}', { params: { path: { orgId: org, connectionId: c.id } } }));
                  setNote(`Connection ${c.name} deleted.`);
                  list.reload();
                },
              }}
            >
              {(c) => (
                <>
                  <strong>{c.name}</strong> <span className="muted">{c.protocol === 'saml' ? 'SAML 2.0' : 'OpenID Connect'}</span>{' '}
                  <span className={`badge ${c.enabled ? 'delivered' : 'failed'}`}>{c.enabled ? 'enabled' : 'disabled'}</span>
                </>
              )}
            </PickList>
          )}
        </Loaded>
        <Pager cursors={cursors} page={list.data} />
      </section>
      {chosen ? (
        <section aria-labelledby="sso-detail">
          <h2 id="sso-detail">{chosen.name}</h2>
          <IdpNeeds c={chosen} />
          <ConnectionForm
            key={chosen.updated_at}
            org={org}
            current={chosen}
            onSaved={(saved) => {
              setNote(`Connection ${saved.name} saved.`);
              list.reload();
            }}
          />
        </section>
      ) : null}
    </>
  );
}

/** What to register at the IdP, and what was learned from it. */
function IdpNeeds({ c }: { c: Connection }) {
  return (
    <section aria-labelledby={`${c.id}-idp`}>
      <h3 id={`${c.id}-idp`}>For the identity provider</h3>
      <dl className="facts">
        {c.oidc ? (
          <>
            <Fact label="Redirect URI (register it at the IdP)" value={c.oidc.redirect_uri} />
            <Fact label="Issuer" value={c.oidc.issuer} />
            <Fact label="Client ID" value={c.oidc.client_id} />
            <Fact label="Client secret" value={c.oidc.has_client_secret ? 'set (never shown)' : 'none (public client with PKCE)'} />
            <Fact label="ID token algorithm" value={c.oidc.id_token_signed_response_alg} />
            <Fact label="Client authentication" value={c.oidc.token_endpoint_auth_method} />
          </>
        ) : null}
        {c.saml ? (
          <>
            <Fact label="ACS URL (HTTP-POST)" value={c.saml.acs_url} />
            <Fact label="SP entity ID (audience)" value={c.saml.sp_entity_id} />
            <div>
              <dt>SP metadata</dt>
              <dd>
                <a href={c.saml.sp_metadata_url} className="data">
                  {c.saml.sp_metadata_url}
                </a>
              </dd>
            </div>
            <Fact label="IdP entity ID" value={c.saml.idp_entity_id} />
            <Fact label="IdP sign-in URL" value={c.saml.idp_sso_url} />
            <Fact label="IdP metadata URL" value={c.saml.metadata_url ?? 'imported as XML'} />
            {c.saml.idp_certificates.map((cert, i) => (
              <Fact
                key={cert.fingerprint_sha256}
                label={`IdP certificate ${i + 1} (SHA-256, valid until ${when(cert.not_after)})`}
                value={cert.fingerprint_sha256}
              />
            ))}
          </>
        ) : null}
      </dl>
    </section>
  );
}

/** Create (no `current`) or edit a connection; a PATCH sends only what changed. */
function ConnectionForm({ org, current, onSaved }: { org: string; current?: Connection; onSaved: (c: Connection) => void }) {
  // Any role of the organization (its own and the tenant's) for new members.
  const roles = useRolesIn(org);
  const id = current ? `sso-${current.id}` : 'sso-new';
  const [protocol, setProtocol] = useState<Protocol>((current?.protocol as Protocol | undefined) ?? 'oidc');
  const [source, setSource] = useState<'xml' | 'url' | 'keep'>(current ? 'keep' : 'xml');
  const form = useSubmit(
    async (f) => {
      const text = (k: string) => String(f.get(k) ?? '').trim();
      const groupRoles = pairs(String(f.get('group_roles') ?? ''), 'Group roles');
      const mapping = (prefix: string, was?: Mapping) => {
        const out: Partial<Mapping> = {};
        for (const k of MAPPED) {
          const v = text(`${prefix}_${k}`);
          if (v && v !== was?.[k]) out[k] = v;
        }
        return out;
      };
      const common: Record<string, unknown> = {
        name: text('name'),
        enabled: f.get('enabled') === 'on',
        default_role: text('default_role'),
        group_roles: groupRoles,
      };
      let settings: Record<string, unknown>;
      if (protocol === 'oidc') {
        const was = current?.oidc;
        settings = {
          issuer: text('issuer'),
          client_id: text('client_id'),
          scopes: words(text('scopes')),
          pkce: f.get('pkce') === 'on',
          claims: mapping('claim', was?.claims),
        };
        if (f.get('remove_secret') === 'on') settings.client_secret = null;
        else if (text('client_secret')) settings.client_secret = String(f.get('client_secret'));
        if (was) {
          if (settings.issuer === was.issuer) delete settings.issuer;
          if (settings.client_id === was.client_id) delete settings.client_id;
          if ((settings.scopes as string[]).join(' ') === was.scopes.join(' ')) delete settings.scopes;
          if (settings.pkce === was.pkce) delete settings.pkce;
        }
        if (Object.keys(settings.claims as object).length === 0) delete settings.claims;
      } else {
        const was = current?.saml;
        settings = { allow_signed_response: f.get('allow_signed_response') === 'on', attributes: mapping('attr', was?.attributes) };
        if (source === 'xml') settings.metadata_xml = String(f.get('metadata_xml') ?? '');
        if (source === 'url') settings.metadata_url = text('metadata_url');
        const sp = text('sp_entity_id');
        if (!was) {
          if (sp) settings.sp_entity_id = sp;
        } else {
          // The default entity id is the SP metadata URL: shown, but stored as null.
          const wasCustom = was.sp_entity_id !== was.sp_metadata_url;
          if (sp && sp !== was.sp_entity_id) settings.sp_entity_id = sp === was.sp_metadata_url ? null : sp;
          if (!sp && wasCustom) settings.sp_entity_id = null;
          if (settings.allow_signed_response === was.allow_signed_response) delete settings.allow_signed_response;
        }
        if (Object.keys(settings.attributes as object).length === 0) delete settings.attributes;
      }
      if (!current) {
        // The form's fields, checked by the server.
        const body = { protocol, ...common, [protocol]: settings } as Body<'/organizations/{orgId}/sso/connections', 'post'>;
        onSaved(await call(client.POST('/organizations/{orgId}/sso/connections', { params: { path: { orgId: org } }, body })));
        return;
      }
      if (common.name === current.name) delete common.name;
      if (common.enabled === current.enabled) delete common.enabled;
      if (common.default_role === current.default_role) delete common.default_role;
      if (pairLines(groupRoles) === pairLines(current.group_roles)) delete common.group_roles;
      const body = { ...common, ...(Object.keys(settings).length ? { [protocol]: settings } : {}) };
      if (Object.keys(body).length === 0) throw new Error('Nothing changed.');
      onSaved(
        await call(
          client.PATCH('/organizations/{orgId}/sso/connections/{connectionId}', {
            params: { path: { orgId: org, connectionId: current.id } },
            body: body as Body<'/organizations/{orgId}/sso/connections/{connectionId}', 'patch'>,
          }),
        ),
      );
    },
    { reset: !current },
  );

  const oidc = current?.oidc;
  const saml = current?.saml;
  return (
    <FormCard
      id={`${id}-title`}
      title={current ? `Edit ${current.name}` : 'New SSO connection'}
      heading={current ? 'h3' : 'h2'}
      submit={current ? 'Save connection' : 'Create connection'}
      form={form}
    >
      {current ? null : (
        <fieldset>
          <legend>Protocol</legend>
          <label className="check">
            <input type="radio" name="protocol" value="oidc" checked={protocol === 'oidc'} onChange={() => setProtocol('oidc')} /> OpenID Connect
          </label>
          <label className="check">
            <input type="radio" name="protocol" value="saml" checked={protocol === 'saml'} onChange={() => setProtocol('saml')} /> SAML 2.0
          </label>
        </fieldset>
      )}
      <Field id={`${id}-name`} label="Name">
        <input id={`${id}-name`} name="name" required maxLength={200} defaultValue={current?.name} placeholder="Acme Okta" />
      </Field>
      <label className="check">
        <input type="checkbox" name="enabled" defaultChecked={current?.enabled ?? true} /> Enabled (people can sign in through it)
      </label>
      <Field id={`${id}-role`} label="Role of new members">
        <select id={`${id}-role`} name="default_role" defaultValue={current?.default_role ?? 'member'}>
          <RoleOptions roles={roles.data ?? []} held={[current?.default_role ?? 'member']} />
        </select>
      </Field>
      <Field
        id={`${id}-groups`}
        label="Group roles (one group = role a line; role admin or member)"
        hint="A new member gets the role of the most privileged group they are in. Groups match without regard to case."
      >
        <textarea
          id={`${id}-groups`}
          name="group_roles"
          rows={2}
          defaultValue={current ? pairLines(current.group_roles) : ''}
          placeholder="Admins = admin"
          aria-describedby={`${id}-groups-hint`}
        />
      </Field>
      {protocol === 'oidc' ? (
        <fieldset>
          <legend>OpenID Connect</legend>
          <Field id={`${id}-issuer`} label="Issuer" hint="Its discovery document is fetched when you save.">
            <input
              id={`${id}-issuer`}
              name="issuer"
              type="url"
              required={!current}
              defaultValue={oidc?.issuer}
              placeholder="https://acme.okta.com"
              aria-describedby={`${id}-issuer-hint`}
            />
          </Field>
          <Field id={`${id}-client`} label="Client ID">
            <input id={`${id}-client`} name="client_id" required={!current} maxLength={255} defaultValue={oidc?.client_id} autoComplete="off" />
          </Field>
          <Field
            id={`${id}-secret`}
            label={current ? 'New client secret (optional)' : 'Client secret (optional)'}
            hint="Stored encrypted and never shown again."
          >
            <input
              id={`${id}-secret`}
              name="client_secret"
              type="password"
              autoComplete="new-password"
              maxLength={1024}
              aria-describedby={`${id}-secret-hint`}
            />
          </Field>
          {oidc?.has_client_secret ? (
            <label className="check">
              <input type="checkbox" name="remove_secret" /> Remove the client secret
            </label>
          ) : null}
          <Field id={`${id}-scopes`} label="Scopes (space-separated, with openid)">
            <input id={`${id}-scopes`} name="scopes" defaultValue={(oidc?.scopes ?? ['openid', 'email', 'profile']).join(' ')} />
          </Field>
          <label className="check">
            <input type="checkbox" name="pkce" defaultChecked={oidc?.pkce ?? true} /> Use PKCE (S256)
          </label>
          {MAPPED.map((k) => (
            <Field key={k} id={`${id}-claim-${k}`} label={`Claim carrying the ${k === 'name' ? 'display name' : k}`}>
              <input id={`${id}-claim-${k}`} name={`claim_${k}`} maxLength={100} defaultValue={oidc?.claims[k] ?? k} />
            </Field>
          ))}
        </fieldset>
      ) : (
        <fieldset>
          <legend>SAML 2.0</legend>
          <Field id={`${id}-source`} label="IdP metadata">
            <select id={`${id}-source`} value={source} onChange={(e) => setSource(e.target.value as 'xml' | 'url' | 'keep')}>
              {current ? <option value="keep">Keep the imported metadata</option> : null}
              <option value="xml">Paste the metadata XML</option>
              <option value="url">Fetch it from a URL</option>
            </select>
          </Field>
          {source === 'xml' ? (
            <Field id={`${id}-xml`} label="Metadata XML">
              <textarea id={`${id}-xml`} name="metadata_xml" rows={5} required className="mono" />
            </Field>
          ) : null}
          {source === 'url' ? (
            <Field id={`${id}-url`} label="Metadata URL">
              <input id={`${id}-url`} name="metadata_url" type="url" required defaultValue={saml?.metadata_url ?? ''} />
            </Field>
          ) : null}
          <Field id={`${id}-sp`} label="SP entity ID (optional)" hint="Empty: the SP metadata URL.">
            <input
              id={`${id}-sp`}
              name="sp_entity_id"
              maxLength={1024}
              defaultValue={saml && saml.sp_entity_id !== saml.sp_metadata_url ? saml.sp_entity_id : ''}
              aria-describedby={`${id}-sp-hint`}
            />
          </Field>
          <label className="check">
            <input type="checkbox" name="allow_signed_response" defaultChecked={saml?.allow_signed_response ?? false} /> Accept a signed Response around an
            unsigned assertion
          </label>
          {MAPPED.map((k) => (
            <Field key={k} id={`${id}-attr-${k}`} label={`Attribute carrying the ${k === 'name' ? 'display name' : k}`}>
              <input id={`${id}-attr-${k}`} name={`attr_${k}`} maxLength={256} defaultValue={saml?.attributes[k] ?? k} />
            </Field>
          ))}
        </fieldset>
      )}
    </FormCard>
  );
}
