import QRCode from 'qrcode';
import { useEffect, useState } from 'react';
import { type Answer, type Body, call, CLAIM_TYPES, client, type Item, TX_CODE_MODES } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { DataTable, Loaded, LoadedItem, LoadStatus, Pager } from '../components/lists';
import { OrganizationScope } from '../components/organizations';
import { ConfirmButton, Empty, ErrorNote, Field, Loading, SecretOnce, useLoad, when } from '../ui';
import { Fact, usePage } from './feature-kit';

type ClaimType = (typeof CLAIM_TYPES)[number];
type CredentialType = Item<'/credential_types'>;
type TxMode = (typeof TX_CODE_MODES)[number];
const TX_MODE_LABELS: Record<TxMode, string> = { numeric: 'digits', text: 'letters and digits' };
type Offer = Answer<'/organizations/{orgId}/credentials/offers', 'post'>;
type OfferBody = Body<'/organizations/{orgId}/credentials/offers', 'post'>;

const MEMBERSHIP = 'OrganizationMembership';

/** Credential types, and per organization: offers (with a QR code) and issued credentials (revocation). */
export function Credentials() {
  const types = usePage((page) => call(client.GET('/credential_types', { params: { query: page } })), []);
  return (
    <>
      <CredentialTypes {...types} />
      <section aria-labelledby="vc-org-title">
        <h2 id="vc-org-title">Offers and issued credentials</h2>
        <OrganizationScope id="vc-org" empty="Credential offers and issued credentials belong to organizations: create an organization first.">
          {(org) => (
            <div key={org}>
              <OfferForm org={org} types={types.list.data?.data ?? []} />
              <IssuedList org={org} />
            </div>
          )}
        </OrganizationScope>
      </section>
    </>
  );
}

interface ClaimRow {
  key: number;
  name: string;
  type: ClaimType;
  mandatory: boolean;
  display: string;
}

function CredentialTypes({ list, cursors }: ReturnType<typeof usePage<CredentialType>>) {
  const [rows, setRows] = useState<ClaimRow[]>([{ key: 0, name: '', type: 'string', mandatory: true, display: '' }]);
  const [next, setNext] = useState(1);
  const [note, setNote] = useState('');
  const set = (key: number, change: Partial<ClaimRow>) => setRows((rs) => rs.map((r) => (r.key === key ? { ...r, ...change } : r)));

  const create = useSubmit(
    async (f) => {
      const claims = Object.fromEntries(
        rows.map((r) => [r.name.trim(), { type: r.type, mandatory: r.mandatory, ...(r.display.trim() ? { display_name: r.display.trim() } : {}) }]),
      );
      const t = await call(
        client.POST('/credential_types', {
          body: {
            id: String(f.get('id') ?? '').trim(),
            vct: String(f.get('vct') ?? '').trim(),
            display_name: String(f.get('display_name') ?? '').trim(),
            claims,
            lifetime_seconds: Number(f.get('lifetime_seconds')),
          },
        }),
      );
      setRows([{ key: next, name: '', type: 'string', mandatory: true, display: '' }]);
      setNext(next + 1);
      setNote(`Credential type ${t.id} created.`);
      list.reload();
    },
    { reset: true },
  );

  return (
    <>
      <FormCard id="vct-new" title="New credential type" submit="Create credential type" form={create}>
        <Field id="vct-id" label="Identifier (credential_configuration_id)" hint="A letter, then up to 63 letters, digits, _ . or -.">
          <input
            id="vct-id"
            name="id"
            required
            maxLength={64}
            pattern="[A-Za-z][A-Za-z0-9_.\-]{0,63}"
            placeholder="EmployeeBadge"
            aria-describedby="vct-id-hint"
          />
        </Field>
        <Field id="vct-vct" label="vct (the type's URI)">
          <input id="vct-vct" name="vct" required maxLength={2000} placeholder="https://example.com/credentials/EmployeeBadge" />
        </Field>
        <Field id="vct-display" label="Display name">
          <input id="vct-display" name="display_name" required maxLength={200} placeholder="Employee badge" />
        </Field>
        <Field id="vct-lifetime" label="Lifetime in seconds" hint="60 to 315360000; 31536000 is one year.">
          <input
            id="vct-lifetime"
            name="lifetime_seconds"
            type="number"
            required
            min={60}
            max={315360000}
            defaultValue={31536000}
            aria-describedby="vct-lifetime-hint"
          />
        </Field>
        <fieldset>
          <legend>Claims</legend>
          {rows.map((r, i) => (
            <div className="claims-row" key={r.key}>
              <Field id={`claim-${r.key}-name`} label={`Claim ${i + 1} name`}>
                <input
                  id={`claim-${r.key}-name`}
                  required
                  pattern="[a-z_][a-z0-9_]{0,63}"
                  value={r.name}
                  onChange={(e) => set(r.key, { name: e.target.value })}
                  placeholder="employee_id"
                />
              </Field>
              <Field id={`claim-${r.key}-type`} label={`Claim ${i + 1} type`}>
                <select id={`claim-${r.key}-type`} value={r.type} onChange={(e) => set(r.key, { type: e.target.value as ClaimType })}>
                  {CLAIM_TYPES.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                </select>
              </Field>
              <Field id={`claim-${r.key}-display`} label={`Claim ${i + 1} display name (optional)`}>
                <input id={`claim-${r.key}-display`} value={r.display} maxLength={200} onChange={(e) => set(r.key, { display: e.target.value })} />
              </Field>
              <label className="check">
                <input type="checkbox" checked={r.mandatory} onChange={(e) => set(r.key, { mandatory: e.target.checked })} /> Claim {i + 1} mandatory
              </label>
              {rows.length > 1 ? (
                <button type="button" onClick={() => setRows((rs) => rs.filter((x) => x.key !== r.key))}>
                  Remove claim {i + 1}
                </button>
              ) : null}
            </div>
          ))}
          <button
            type="button"
            disabled={rows.length >= 50}
            onClick={() => {
              setRows((rs) => [...rs, { key: next, name: '', type: 'string', mandatory: false, display: '' }]);
              setNext(next + 1);
            }}
          >
            Add a claim
          </button>
        </fieldset>
      </FormCard>
      <section aria-labelledby="vct-list">
        <h2 id="vct-list">Credential types</h2>
        <p role="status" className="muted">
          {note}
        </p>
        <Loaded state={list} rows={list.data?.data} what="credential types" empty="No credential types.">
          {(types) => (
            <ul className="pick">
              {types.map((t) => (
                <li key={t.id}>
                  <span className="grow">
                    <strong>{t.display_name}</strong> <code>{t.id}</code> {t.built_in ? <span className="badge">built in</span> : null}
                    <br />
                    <span className="muted">
                      Claims:{' '}
                      {Object.entries(t.claims)
                        .map(([n, c]) => `${n} (${c.type}${c.mandatory ? ', mandatory' : ''})`)
                        .join(', ')}{' '}
                      · valid {Math.round(t.lifetime_seconds / 86400)} days
                    </span>
                  </span>
                  {t.built_in ? null : (
                    <ConfirmButton
                      label="Delete"
                      question={`Delete ${t.id}? No new offers can be made; issued credentials stay valid.`}
                      confirmLabel="Yes, delete"
                      onConfirm={async () => {
                        await call(client.DELETE('/credential_types/{typeId}', { params: { path: { typeId: t.id } } }));
                        setNote(`Credential type ${t.id} deleted.`);
                        list.reload();
                      }}
                    />
                  )}
                </li>
              ))}
            </ul>
          )}
        </Loaded>
        <Pager cursors={cursors} page={list.data} />
      </section>
    </>
  );
}

function OfferForm({ org, types }: { org: string; types: CredentialType[] }) {
  const [chosen, setChosen] = useState(MEMBERSHIP);
  // A type deleted meanwhile falls back to the built-in one.
  const typeId = types.some((t) => t.id === chosen) ? chosen : MEMBERSHIP;
  const [txCode, setTxCode] = useState(true);
  const [offer, setOffer] = useState<Offer>();
  const members = useLoad(() => call(client.GET('/organizations/{orgId}/members', { params: { path: { orgId: org }, query: { limit: 100 } } })), [org]);
  const type = types.find((t) => t.id === typeId);

  const make = useSubmit(async (f) => {
    let subject: OfferBody['subject'];
    if (typeId === MEMBERSHIP) {
      if (!f.get('user_id')) throw new Error('This organization has no members to offer a membership credential to.');
      subject = { user_id: String(f.get('user_id')) };
    } else {
      const claims: Record<string, string | number | boolean> = {};
      for (const [name, spec] of Object.entries(type?.claims ?? {})) {
        const raw = String(f.get(`claim:${name}`) ?? '');
        if (raw === '') continue;
        claims[name] = spec.type === 'number' ? Number(raw) : spec.type === 'boolean' ? raw === 'true' : raw;
      }
      subject = { claims };
    }
    setOffer(
      await call(
        client.POST('/organizations/{orgId}/credentials/offers', {
          params: { path: { orgId: org } },
          body: {
            credential_configuration_id: typeId,
            subject,
            ...(txCode ? { tx_code: { length: Number(f.get('tx_length')), input_mode: f.get('tx_mode') as TxMode } } : {}),
          },
        }),
      ),
    );
  });

  return (
    <>
      {offer ? <OfferResult offer={offer} onDone={() => setOffer(undefined)} /> : null}
      <FormCard id="offer-new" title="Make a credential offer" heading="h3" submit="Make offer" form={make}>
        <Field id="offer-type" label="Credential type">
          <select id="offer-type" value={typeId} onChange={(e) => setChosen(e.target.value)}>
            {types.map((t) => (
              <option key={t.id} value={t.id}>
                {t.display_name} ({t.id})
              </option>
            ))}
          </select>
        </Field>
        {typeId === MEMBERSHIP ? (
          <>
            <LoadStatus state={members} what="members" />
            {members.data?.data.length ? (
              <Field id="offer-user" label="Member" hint="The credential states this member's organization, role and email at issuance.">
                <select id="offer-user" name="user_id" aria-describedby="offer-user-hint">
                  {members.data.data.map((m) => (
                    <option key={m.user_id} value={m.user_id}>
                      {m.user?.email ?? m.user_id} ({m.role})
                    </option>
                  ))}
                </select>
              </Field>
            ) : null}
            {members.data && members.data.data.length === 0 ? <Empty>This organization has no members to offer a membership credential to.</Empty> : null}
          </>
        ) : (
          <fieldset>
            <legend>Claims</legend>
            {Object.entries(type?.claims ?? {}).map(([name, spec]) => {
              const id = `offer-claim-${name}`;
              const label = `${spec.display_name ?? name}${spec.mandatory ? '' : ' (optional)'}`;
              return (
                <Field key={name} id={id} label={label}>
                  {spec.type === 'boolean' ? (
                    <select id={id} name={`claim:${name}`} required={spec.mandatory} defaultValue="">
                      <option value="">{spec.mandatory ? 'Choose' : 'Not set'}</option>
                      <option value="true">true</option>
                      <option value="false">false</option>
                    </select>
                  ) : (
                    <input
                      id={id}
                      name={`claim:${name}`}
                      type={spec.type === 'number' ? 'number' : 'text'}
                      step="any"
                      required={spec.mandatory}
                      maxLength={spec.type === 'string' ? 2000 : undefined}
                    />
                  )}
                </Field>
              );
            })}
          </fieldset>
        )}
        <label className="check">
          <input type="checkbox" checked={txCode} onChange={(e) => setTxCode(e.target.checked)} /> Require a transaction code (give it to the holder separately)
        </label>
        {txCode ? (
          <div className="filters">
            <Field id="offer-tx-length" label="Code length">
              <input id="offer-tx-length" name="tx_length" type="number" min={4} max={8} defaultValue={6} required />
            </Field>
            <Field id="offer-tx-mode" label="Code characters">
              <select id="offer-tx-mode" name="tx_mode" defaultValue="numeric">
                {TX_CODE_MODES.map((m) => (
                  <option key={m} value={m}>
                    {TX_MODE_LABELS[m]}
                  </option>
                ))}
              </select>
            </Field>
          </div>
        ) : null}
      </FormCard>
    </>
  );
}

/** The offer: a QR code of its link for a wallet to scan, the link and URI, the tx_code once. */
function OfferResult({ offer, onDone }: { offer: Offer; onDone: () => void }) {
  const [qr, setQr] = useState<string>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let live = true;
    QRCode.toString(offer.credential_offer_link, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }).then(
      (svg) => live && setQr(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`),
      (err: unknown) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [offer.credential_offer_link]);
  const minutes = Math.round(offer.expires_in / 60);
  return (
    <section className="secret" aria-labelledby="offer-made">
      <h3 id="offer-made">Credential offer {offer.offer_id}</h3>
      <p>
        Scan the QR code with a wallet, or send the holder the link. It can be redeemed once, within{' '}
        {minutes >= 1 ? `${minutes} minute${minutes === 1 ? '' : 's'}` : `${offer.expires_in} seconds`}.
      </p>
      <figure className="qr">
        {qr ? <img src={qr} alt="QR code of the credential offer link" width={240} height={240} /> : <Loading what="the QR code" />}
        <ErrorNote error={error} />
      </figure>
      <dl className="facts">
        <Fact label="Offer link (openid-credential-offer)" value={offer.credential_offer_link} />
        <Fact label="Offer URI" value={offer.credential_offer_uri} />
      </dl>
      {offer.tx_code ? <SecretOnce label="Transaction code for the holder" secret={offer.tx_code} onDone={onDone} /> : null}
      {offer.tx_code ? null : (
        <button type="button" onClick={onDone}>
          Close the offer
        </button>
      )}
    </section>
  );
}

function IssuedList({ org }: { org: string }) {
  const { list, cursors } = usePage((page) => call(client.GET('/organizations/{orgId}/credentials', { params: { path: { orgId: org }, query: page } })), [org]);
  const [selected, setSelected] = useState<string>();
  const [note, setNote] = useState('');
  return (
    <section aria-labelledby="vc-issued">
      <h3 id="vc-issued">Issued credentials</h3>
      <button type="button" onClick={list.reload}>
        Refresh
      </button>
      <p role="status" className="muted">
        {note}
      </p>
      <Loaded state={list} rows={list.data?.data} what="issued credentials" empty="No credentials issued in this organization yet.">
        {(rows) => (
          <DataTable
            columns={['Type', 'Subject', 'Status', 'Issued', 'Expires', { hidden: 'Actions' }]}
            rows={rows}
            rowKey={(c) => c.id}
            rowProps={(c) => ({ 'data-status': c.status })}
          >
            {(c) => (
              <>
                <td>
                  <code>{c.type}</code>
                </td>
                <td>
                  {/* A holder key's DID can be long: the whole value is in the details. */}
                  <code className="data">{c.subject.length > 40 ? `${c.subject.slice(0, 36)}…` : c.subject}</code>
                </td>
                <td>
                  <span className={`badge ${c.status === 'revoked' ? 'failed' : 'delivered'}`}>{c.status}</span>
                </td>
                <td>{when(c.issued_at)}</td>
                <td>{when(c.expires_at)}</td>
                <td>
                  <div className="row">
                    <button type="button" aria-pressed={selected === c.id} onClick={() => setSelected(selected === c.id ? undefined : c.id)}>
                      Details
                    </button>
                    {c.status === 'revoked' ? null : (
                      <ConfirmButton
                        label="Revoke"
                        question="Revoke this credential? Verifiers will see it as revoked; this cannot be undone."
                        confirmLabel="Yes, revoke"
                        onConfirm={async () => {
                          await call(client.POST('/organizations/{orgId}/credentials/{vcId}/revoke', { params: { path: { orgId: org, vcId: c.id } } }));
                          setNote(`Credential ${c.id} revoked.`);
                          list.reload();
                        }}
                      />
                    )}
                  </div>
                </td>
              </>
            )}
          </DataTable>
        )}
      </Loaded>
      <Pager cursors={cursors} page={list.data} />
      {selected ? <IssuedDetail key={`${selected}-${note}`} org={org} id={selected} /> : null}
    </section>
  );
}

function IssuedDetail({ org, id }: { org: string; id: string }) {
  const credential = useLoad(() => call(client.GET('/organizations/{orgId}/credentials/{vcId}', { params: { path: { orgId: org, vcId: id } } })), [org, id]);
  return (
    <section className="card" aria-labelledby="vc-detail">
      <h3 id="vc-detail">Credential {id}</h3>
      <LoadedItem state={credential} what="the credential">
        {(d) => (
          <dl className="facts">
            <Fact label="Type" value={`${d.type} (${d.vct})`} />
            <Fact label="Format" value={d.format} />
            <Fact label="Subject" value={d.subject} />
            <Fact label="User" value={d.user_id ?? '—'} />
            <Fact label="Offer" value={d.offer_id} />
            <Fact label="Status" value={d.revoked_at ? `revoked ${when(d.revoked_at)}` : d.status} />
            <Fact label="Status list" value={`${d.status_list.uri} (index ${d.status_list.idx})`} />
            <Fact label="Issued" value={when(d.issued_at)} />
            <Fact label="Expires" value={when(d.expires_at)} />
          </dl>
        )}
      </LoadedItem>
    </section>
  );
}
