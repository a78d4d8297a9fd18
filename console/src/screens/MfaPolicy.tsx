import { useState } from 'react';
import { call, client, MFA_POLICIES } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { LoadedItem } from '../components/lists';
import { OrganizationScope } from '../components/organizations';
import { useLoad, when } from '../ui';
import './features.css';

type Policy = (typeof MFA_POLICIES)[number];

const MEANING: Record<Policy, string> = {
  off: 'no second factor is asked for',
  optional: 'a second factor is asked for when the user has one',
  required: 'every user needs a second factor (one without is asked to add one at sign-in)',
};

/** The tenant's MFA policy and each organization's (which can raise it, never lower it). */
export function MfaPolicy() {
  // A new tenant policy changes every organization's effective one: they load again.
  const [tenantVersion, setTenantVersion] = useState(0);
  return (
    <>
      <TenantPolicyForm onSaved={() => setTenantVersion((v) => v + 1)} />
      <section aria-labelledby="mfa-org-title">
        <h2 id="mfa-org-title">Organization policy</h2>
        <p className="muted">
          An organization can require more than the tenant, never less: its members get the stricter of the two (and of their other organizations&apos;).
        </p>
        <OrganizationScope id="mfa-org" empty="Organization policies belong to organizations: create an organization first.">
          {(org) => <OrganizationPolicyForm key={org} org={org} tenantVersion={tenantVersion} />}
        </OrganizationScope>
      </section>
    </>
  );
}

function PolicyChoices({ name, value, onChange, follow }: { name: string; value: string; onChange: (v: string) => void; follow?: string }) {
  return (
    <div className="policy">
      {follow ? (
        <label>
          <input type="radio" name={name} value="" checked={value === ''} onChange={() => onChange('')} />
          <span>
            <strong>Follow the tenant</strong> <span className="muted">(now {follow})</span>
          </span>
        </label>
      ) : null}
      {MFA_POLICIES.map((p) => (
        <label key={p}>
          <input type="radio" name={name} value={p} checked={value === p} onChange={() => onChange(p)} />
          <span>
            <strong>{p}</strong> <span className="muted">— {MEANING[p]}</span>
          </span>
        </label>
      ))}
    </div>
  );
}

function TenantPolicyForm({ onSaved }: { onSaved: () => void }) {
  const current = useLoad(() => call(client.GET('/mfa_policy')), []);
  const [choice, setChoice] = useState<string>();
  const [note, setNote] = useState('');
  const value = choice ?? current.data?.policy ?? '';
  const form = useSubmit(async () => {
    const r = await call(client.PUT('/mfa_policy', { body: { policy: value as Policy } }));
    setNote(`Tenant policy saved: ${r.policy}.`);
    setChoice(undefined);
    current.reload();
    onSaved();
  });
  return (
    <LoadedItem state={current} what="the tenant policy">
      {(t) => (
        <FormCard id="mfa-tenant" title="Tenant policy" submit="Save tenant policy" form={form} status={note}>
          <fieldset>
            <legend>Second factor at sign-in, for everyone in the tenant</legend>
            <PolicyChoices name="mfa-tenant" value={value} onChange={setChoice} />
          </fieldset>
          <p className="muted">{t.updated_at ? `Set ${when(t.updated_at)}.` : 'Never set: the default (optional) applies.'}</p>
        </FormCard>
      )}
    </LoadedItem>
  );
}

function OrganizationPolicyForm({ org, tenantVersion }: { org: string; tenantVersion: number }) {
  const current = useLoad(() => call(client.GET('/organizations/{orgId}/mfa_policy', { params: { path: { orgId: org } } })), [org, tenantVersion]);
  const tenant = useLoad(() => call(client.GET('/mfa_policy')), [tenantVersion]);
  const [choice, setChoice] = useState<string>();
  const [note, setNote] = useState('');
  const value = choice ?? current.data?.policy ?? '';
  const form = useSubmit(async () => {
    const r = await call(
      client.PUT('/organizations/{orgId}/mfa_policy', { params: { path: { orgId: org } }, body: { policy: value === '' ? null : (value as Policy) } }),
    );
    setNote(
      r.policy === null ? `Organization policy cleared: its members follow the tenant (${r.effective_policy}).` : `Organization policy saved: ${r.policy}.`,
    );
    setChoice(undefined);
    current.reload();
  });
  return (
    <LoadedItem state={current} what="the organization policy">
      {(o) => (
        <FormCard id="mfa-org-form" title="This organization's policy" heading="h3" submit="Save organization policy" form={form} status={note}>
          <fieldset>
            <legend>Second factor for this organization&apos;s members</legend>
            <PolicyChoices name="mfa-org-choice" value={value} onChange={setChoice} follow={tenant.data?.policy ?? '…'} />
          </fieldset>
          <p>
            In effect for its members: <strong>{o.effective_policy}</strong>
            {o.updated_at ? <span className="muted"> (set {when(o.updated_at)})</span> : null}
          </p>
        </FormCard>
      )}
    </LoadedItem>
  );
}
