import { type FormEvent, useState } from 'react';
import { api, type Organization, type Page, query } from '../api';
import { Empty, ErrorNote, Field, Loading, useLoad, when } from '../ui';
import { Members } from './Members';

export function Organizations() {
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after[after.length - 1];
  const list = useLoad(() => api<Page<Organization>>('GET', `/organizations${query({ limit: 50, after: cursor })}`), [cursor]);
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState<string>();
  const [createError, setCreateError] = useState<unknown>();

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const domain = String(data.get('domain') ?? '').trim();
    setCreateError(undefined);
    try {
      const org = await api<Organization>('POST', '/organizations', { name: data.get('name'), ...(domain ? { domain } : {}) });
      form.reset();
      setSelected(org.id);
      list.reload();
    } catch (err) {
      setCreateError(err);
    }
  };

  const needle = search.trim().toLowerCase();
  const shown = (list.data?.data ?? []).filter((o) => !needle || [o.name, o.domain ?? '', o.id, o.slug ?? ''].some((v) => v.toLowerCase().includes(needle)));

  return (
    <div className="columns">
      <section aria-labelledby="org-list">
        <h2 id="org-list">All organizations</h2>
        <form className="card" onSubmit={create} aria-labelledby="org-create">
          <h3 id="org-create">New organization</h3>
          <Field id="org-name" label="Name">
            <input id="org-name" name="name" required maxLength={200} />
          </Field>
          <Field id="org-domain" label="Domain (optional)">
            <input id="org-domain" name="domain" placeholder="acme.example" />
          </Field>
          <ErrorNote error={createError} />
          <button type="submit" className="primary">
            Create organization
          </button>
        </form>
        <Field id="org-search" label="Search this page">
          <input id="org-search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Name, domain or id" />
        </Field>
        {list.loading ? <Loading what="organizations" /> : null}
        <ErrorNote error={list.error} />
        {list.data && shown.length === 0 ? <Empty>{needle ? 'No organization on this page matches.' : 'No organizations yet. Create the first one above.'}</Empty> : null}
        <ul className="pick">
          {shown.map((o) => (
            <li key={o.id}>
              <button type="button" aria-pressed={o.id === selected} onClick={() => setSelected(o.id)}>
                <strong>{o.name}</strong> <span className="muted">{o.domain ?? o.id}</span>
              </button>
            </li>
          ))}
        </ul>
        <div className="pager">
          {after.length > 0 ? (
            <button type="button" onClick={() => setAfter(after.slice(0, -1))}>
              Previous page
            </button>
          ) : null}
          {list.data?.has_more && list.data.next_cursor ? (
            <button type="button" onClick={() => setAfter([...after, list.data!.next_cursor!])}>
              Next page
            </button>
          ) : null}
        </div>
      </section>
      {selected ? <OrganizationDetail key={selected} id={selected} onChanged={list.reload} /> : null}
    </div>
  );
}

function OrganizationDetail({ id, onChanged }: { id: string; onChanged: () => void }) {
  const org = useLoad(() => api<Organization>('GET', `/organizations/${id}`), [id]);
  if (org.loading && !org.data) return <Loading what="the organization" />;
  if (org.error) return <ErrorNote error={org.error} />;
  const o = org.data!;
  return (
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
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setSaved(false);
    try {
      await api('PATCH', `/organizations/${org.id}`, {
        brand_display_name: displayName.trim() || null,
        brand_logo_url: logo.trim() || null,
        brand_primary_color: color.trim() || null,
      });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err);
    }
  };
  const accent = COLOR.test(color) ? color : '#1d4ed8';
  const logoOk = logo.startsWith('https://');
  return (
    <section aria-labelledby="branding" className="card">
      <h3 id="branding">Branding</h3>
      <div className="columns">
        <form onSubmit={save}>
          <Field id="brand-name" label="Display name">
            <input id="brand-name" value={displayName} maxLength={100} onChange={(e) => setDisplayName(e.target.value)} placeholder={org.name} />
          </Field>
          <Field id="brand-logo" label="Logo URL (https)">
            <input id="brand-logo" value={logo} onChange={(e) => setLogo(e.target.value)} placeholder="https://acme.example/logo.png" />
          </Field>
          <Field id="brand-color" label="Primary color (#rrggbb)">
            <input id="brand-color" value={color} onChange={(e) => setColor(e.target.value)} placeholder="#1d4ed8" />
          </Field>
          <ErrorNote error={error} />
          <p role="status" className="muted">
            {saved ? 'Branding saved.' : ''}
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
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setSaved(false);
    const aaguids = list.split(/\s+/).map((s) => s.trim()).filter(Boolean);
    try {
      await api('PUT', `/organizations/${org.id}/webauthn_policy`, { aaguid_allowlist: restricted ? aaguids : null });
      setSaved(true);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form className="card" onSubmit={save} aria-labelledby="webauthn">
      <h3 id="webauthn">Passkey policy</h3>
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
      <ErrorNote error={error} />
      <p role="status" className="muted">
        {saved ? 'Passkey policy saved.' : ''}
      </p>
      <button type="submit">Save passkey policy</button>
    </form>
  );
}
