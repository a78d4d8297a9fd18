import { useState } from 'react';
import { call, client, type Organization } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { Loaded, LoadedItem, Pager, PickList, useCursors } from '../components/lists';
import { ErrorNote, Field, useLoad, when } from '../ui';
import { Members } from './Members';

export function Organizations() {
  const cursors = useCursors();
  const list = useLoad(() => call(client.GET('/organizations', { params: { query: { limit: 50, after: cursors.after } } })), [cursors.after]);
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState<string>();

  const create = useSubmit(
    async (data) => {
      const domain = String(data.get('domain') ?? '').trim();
      const org = await call(client.POST('/organizations', { body: { name: String(data.get('name') ?? ''), ...(domain ? { domain } : {}) } }));
      setSelected(org.id);
      list.reload();
    },
    { reset: true },
  );

  const needle = search.trim().toLowerCase();
  const shown = list.data?.data.filter((o) => !needle || [o.name, o.domain ?? '', o.id, o.slug ?? ''].some((v) => v.toLowerCase().includes(needle)));

  return (
    <div className="columns">
      <section aria-labelledby="org-list">
        <h2 id="org-list">All organizations</h2>
        <FormCard id="org-create" title="New organization" heading="h3" submit="Create organization" form={create}>
          <Field id="org-name" label="Name">
            <input id="org-name" name="name" required maxLength={200} />
          </Field>
          <Field id="org-domain" label="Domain (optional)">
            <input id="org-domain" name="domain" placeholder="acme.example" />
          </Field>
        </FormCard>
        <Field id="org-search" label="Search this page">
          <input id="org-search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Name, domain or id" />
        </Field>
        <Loaded
          state={list}
          rows={shown}
          what="organizations"
          empty={needle ? 'No organization on this page matches.' : 'No organizations yet. Create the first one above.'}
        >
          {(rows) => (
            <PickList rows={rows} rowKey={(o) => o.id} selected={selected} onPick={setSelected}>
              {(o) => (
                <>
                  <strong>{o.name}</strong> <span className="muted">{o.domain ?? o.id}</span>
                </>
              )}
            </PickList>
          )}
        </Loaded>
        <Pager cursors={cursors} page={list.data} />
      </section>
      {selected ? <OrganizationDetail key={selected} id={selected} onChanged={list.reload} /> : null}
    </div>
  );
}

function OrganizationDetail({ id, onChanged }: { id: string; onChanged: () => void }) {
  const org = useLoad(() => call(client.GET('/organizations/{orgId}', { params: { path: { orgId: id } } })), [id]);
  return (
    <LoadedItem state={org} what="the organization">
      {(o) => (
        <section aria-labelledby="org-detail" className="detail">
          <h2 id="org-detail">{o.name}</h2>
          <p className="muted">
            <code>{o.id}</code> · created {when(o.created_at)}
          </p>
          <Branding
            org={o}
            onSaved={() => {
              org.reload();
              onChanged();
            }}
          />
          <Members org={o.id} />
          <WebauthnPolicy org={o} />
        </section>
      )}
    </LoadedItem>
  );
}

/** Black or white text, whichever reads better on the brand color. */
const textOn = (hex: string) => {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b! > 0.179 ? '#000000' : '#ffffff';
};
const COLOR = /^#[0-9a-fA-F]{6}$/;

function Branding({ org, onSaved }: { org: Organization; onSaved: () => void }) {
  const [displayName, setDisplayName] = useState(org.brand_display_name ?? '');
  const [logo, setLogo] = useState(org.brand_logo_url ?? '');
  const [color, setColor] = useState(org.brand_primary_color ?? '');
  const save = useSubmit(async () => {
    await call(
      client.PATCH('/organizations/{orgId}', {
        params: { path: { orgId: org.id } },
        body: { brand_display_name: displayName.trim() || null, brand_logo_url: logo.trim() || null, brand_primary_color: color.trim() || null },
      }),
    );
    onSaved();
  });
  const accent = COLOR.test(color) ? color : '#1d4ed8';
  const logoOk = logo.startsWith('https://');
  return (
    <section aria-labelledby="branding" className="card">
      <h3 id="branding">Branding</h3>
      <div className="columns">
        <form onSubmit={save.onSubmit} aria-busy={save.busy}>
          <Field id="brand-name" label="Display name">
            <input id="brand-name" value={displayName} maxLength={100} onChange={(e) => setDisplayName(e.target.value)} placeholder={org.name} />
          </Field>
          <Field id="brand-logo" label="Logo URL (https)">
            <input id="brand-logo" value={logo} onChange={(e) => setLogo(e.target.value)} placeholder="https://acme.example/logo.png" />
          </Field>
          <Field id="brand-color" label="Primary color (#rrggbb)">
            <input id="brand-color" value={color} onChange={(e) => setColor(e.target.value)} placeholder="#1d4ed8" />
          </Field>
          <ErrorNote error={save.error} />
          <p role="status" className="muted">
            {save.done ? 'Branding saved.' : ''}
          </p>
          <button type="submit" className="primary">
            Save branding
          </button>
        </form>
        <figure className="preview">
          <figcaption>Live preview of the hosted login page</figcaption>
          <div className="login-preview" aria-hidden="true">
            {logoOk ? <img src={logo} alt="" referrerPolicy="no-referrer" /> : null}
            <div className="login-title">Sign in to {displayName.trim() || org.name}</div>
            <div className="fake-label">Email</div>
            <div className="fake-input" />
            <div className="fake-label">Password</div>
            <div className="fake-input" />
            <div className="fake-button" style={{ background: accent, color: textOn(accent) }}>
              Sign in
            </div>
          </div>
        </figure>
      </div>
    </section>
  );
}

function WebauthnPolicy({ org }: { org: Organization }) {
  const [restricted, setRestricted] = useState(org.webauthn_aaguid_allowlist !== null);
  const [list, setList] = useState((org.webauthn_aaguid_allowlist ?? []).join('\n'));
  const save = useSubmit(async () => {
    const aaguids = list
      .split(/\s+/)
      .map((s) => s.trim())
      .filter(Boolean);
    await call(
      client.PUT('/organizations/{orgId}/webauthn_policy', { params: { path: { orgId: org.id } }, body: { aaguid_allowlist: restricted ? aaguids : null } }),
    );
  });
  return (
    <FormCard
      id="webauthn"
      title="Passkey policy"
      heading="h3"
      submit="Save passkey policy"
      form={save}
      status={save.done ? 'Passkey policy saved.' : ''}
      primary={false}
    >
      <div className="check">
        <input id="webauthn-restrict" type="checkbox" checked={restricted} onChange={(e) => setRestricted(e.target.checked)} />
        <label htmlFor="webauthn-restrict">Allow only these authenticator models (AAGUIDs)</label>
      </div>
      {restricted ? (
        <Field id="webauthn-list" label="Allowed AAGUIDs, one per line (none: no passkeys at all)">
          <textarea id="webauthn-list" rows={4} className="mono" value={list} onChange={(e) => setList(e.target.value)} />
        </Field>
      ) : (
        <p className="muted">Any passkey is accepted.</p>
      )}
    </FormCard>
  );
}
