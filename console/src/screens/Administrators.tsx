import { useEffect, useRef, useState } from 'react';
import { own, query } from '../api';
import { FormCard, useAction, useSubmit } from '../components/forms';
import { DataTable, Loaded } from '../components/lists';
import { ConfirmButton, ErrorNote, Field, useLoad, when } from '../ui';
import { Fact } from './feature-kit';

/** A holder of the tenant_admin role (GET /console/api/admins). */
interface Admin {
  user_id: string;
  email: string;
  granted_at: string;
}

/** An account about to be made an administrator (GET /console/api/admins/candidate). */
interface Candidate {
  user: { id: string; email: string; created_at: string };
  already_admin: boolean;
  managed_by: Array<{ kind: 'directory'; organization_id: string; organization_name: string; connection_id: string; connection_name: string }>;
  sso: Array<{ organization_id: string; organization_name: string; connection_id: string; connection_name: string; protocol?: string }>;
  /** The organization that verified the email's domain (its SSO may sign in as the account). */
  verified_domain?: { organization_id: string; organization_name: string; domain: string } | null;
  organizations: Array<{ id: string; name: string; role: string }>;
  organizations_total?: number;
  has_password?: boolean;
  /** Who last set the password (null with has_password: not recorded). */
  password_set_by?: { type: string; id: string | null; every_permission: boolean } | null;
  /** Sent back with the grant: the server refuses it (409) if the account changed since. */
  fingerprint?: string;
}

/**
 * Whoever set the password may know it: a narrower key (not every permission) did, or who did is
 * not recorded (set before Keyhall recorded it, or by an instance not yet upgraded).
 */
function passwordRisk(c: Candidate): 'narrow' | 'unknown' | null {
  if (!c.has_password) return null;
  if (!c.password_set_by) return 'unknown';
  return c.password_set_by.every_permission ? null : 'narrow';
}

/** The "Password" fact: whether there is one and who set it. */
function passwordFact(c: Candidate): string {
  if (!c.has_password) return 'None';
  const by = c.password_set_by;
  if (!by) return 'Set by someone not recorded';
  if (by.type === 'api_key') return `Set by API key ${by.id ?? ''}${by.every_permission ? '' : ' (a key without every permission)'}`;
  if (by.type === 'user') return `Set by administrator ${by.id ?? ''}`;
  if (by.type === 'system') return 'Set with a setup link or the command line';
  return `Set by ${by.type} ${by.id ?? ''}`;
}

/** "organization ‘A’" or "organizations ‘A’, ‘B’": those that control the account (for the confirmation). */
function controllers(c: Candidate): string {
  const names = [...new Set([...c.managed_by, ...c.sso, ...(c.verified_domain ? [c.verified_domain] : [])].map((x) => `‘${x.organization_name}’`))];
  return `${names.length > 1 ? 'organizations' : 'organization'} ${names.join(', ')}`;
}

/**
 * The tenant's administrators: look an existing user up by email (where the account came from —
 * an organization's SCIM directory or SSO connection — and its memberships), then grant the role
 * to the account shown, by id; remove it after confirmation (the server refuses removing yourself
 * or the last one, and says why).
 */
export function Administrators({ me }: { me: string }) {
  const list = useLoad(() => own<{ data: Admin[] }>('GET', '/admins'), []);
  const [found, setFound] = useState<Candidate>();
  const [granted, setGranted] = useState('');
  const lookUp = useSubmit(async (data) => {
    setFound(undefined);
    setGranted('');
    setFound(await own<Candidate>('GET', `/admins/candidate${query({ email: String(data.get('email') ?? '').trim() })}`));
  });
  return (
    <>
      <p>
        An administrator is a user of this tenant who may use the console: every organization, user, key and setting. They sign in on the hosted login like
        everyone else.
      </p>
      <FormCard id="admin-new" title="Make a user an administrator" submit="Look up" form={lookUp} status={granted}>
        <Field
          id="admin-email"
          label="Email of an existing user"
          hint="Create the user first on the Users screen. The account is shown, with where it came from, before anything is granted."
        >
          <input id="admin-email" name="email" type="email" required aria-describedby="admin-email-hint" onChange={() => setFound(undefined)} />
        </Field>
      </FormCard>
      {found ? (
        <CandidateCard
          key={found.user.id}
          candidate={found}
          onGranted={(email) => {
            setFound(undefined);
            setGranted(`${email} is now an administrator.`);
            list.reload();
          }}
        />
      ) : null}
      <section aria-labelledby="admin-list">
        <h2 id="admin-list">Administrators</h2>
        <Loaded state={list} rows={list.data?.data} what="administrators" empty="No administrators.">
          {(rows) => (
            <DataTable
              columns={['Email', 'User id', 'Administrator since', { hidden: 'Actions' }]}
              rows={rows}
              rowKey={(a) => a.user_id}
              rowProps={(a) => ({ 'data-user': a.user_id })}
            >
              {(a) => (
                <>
                  <td>
                    {a.email}
                    {a.user_id === me ? <span className="muted"> (you)</span> : null}
                  </td>
                  <td>
                    <code>{a.user_id}</code>
                  </td>
                  <td>{when(a.granted_at)}</td>
                  <td>
                    <ConfirmButton
                      label="Remove"
                      question={`Remove ${a.email} as an administrator? The user stays.`}
                      confirmLabel="Yes, remove"
                      onConfirm={async () => {
                        await own('DELETE', `/admins/${a.user_id}`);
                        list.reload();
                      }}
                    />
                  </td>
                </>
              )}
            </DataTable>
          )}
        </Loaded>
      </section>
    </>
  );
}

/**
 * The account found: a warning first when an organization controls it (its SCIM directory
 * created it, it signs in through the organization's SSO connection, or its email is in the
 * organization's verified domain) or a narrower API key set its password, then its facts and
 * memberships, then "Make administrator" (asking first after a warning), which grants this
 * account by id — not whatever the email names by then.
 */
function CandidateCard({ candidate: c, onGranted }: { candidate: Candidate; onGranted: (email: string) => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const grant = useAction();
  const make = async () => {
    await own('POST', '/admins', { user_id: c.user.id, ...(c.fingerprint ? { fingerprint: c.fingerprint } : {}) });
    onGranted(c.user.email);
  };
  const managed = c.managed_by.length > 0 || c.sso.length > 0 || !!c.verified_domain;
  const risk = passwordRisk(c);
  const reasons = [
    ...(managed ? [`${controllers(c)} controls the account`] : []),
    ...(risk === 'narrow' ? [`API key ${c.password_set_by?.id} set its password`] : []),
    ...(risk === 'unknown' ? ['who set its password is not recorded'] : []),
  ];
  const total = c.organizations_total ?? c.organizations.length;
  return (
    <section className="card" aria-labelledby="admin-candidate" data-candidate={c.user.id}>
      <h2 id="admin-candidate" tabIndex={-1} ref={heading}>
        Account found
      </h2>
      {managed ? (
        <div className="warning" role="group" aria-labelledby="admin-candidate-controlled">
          <h3 id="admin-candidate-controlled">An organization controls this account</h3>
          {c.managed_by.map((d) => (
            <p key={d.connection_id}>
              This account was created by the SCIM directory ‘{d.connection_name}’ of organization ‘{d.organization_name}’: that organization's administrators
              control it. Their directory sets its email and name and can deactivate it, and it may have been created under an email you expect before the real
              person ever signed up.
            </p>
          ))}
          {c.sso.map((x) => (
            <p key={x.connection_id}>
              This account signs in through the {x.protocol ? `${x.protocol.toUpperCase()} ` : ''}SSO connection ‘{x.connection_name}’ of organization ‘
              {x.organization_name}’: whoever that organization's identity provider vouches for signs in as this account, so its administrators decide who this
              is.
            </p>
          ))}
          {c.verified_domain ? (
            <p>
              Its email is in ‘{c.verified_domain.domain}’, a verified domain of organization ‘{c.verified_domain.organization_name}’: that organization's SSO
              connection can sign in as this account, whoever its identity provider vouches for.
            </p>
          ) : null}
          <p>
            <strong>As an administrator this account could change every organization, user, key and setting of the tenant.</strong> Make it one only if you know
            who controls it; otherwise ask the person to sign up with an account of their own.
          </p>
        </div>
      ) : null}
      {risk ? (
        <div className="warning" role="group" aria-labelledby="admin-candidate-password">
          <h3 id="admin-candidate-password">
            {risk === 'narrow' ? "A narrower API key set this account's password" : "Who set this account's password is not recorded"}
          </h3>
          <p>
            {risk === 'narrow'
              ? `API key ${c.password_set_by?.id} set the password, and it does not hold every permission: whoever holds that key knows the password`
              : 'It was set before Keyhall recorded who sets passwords, or by an instance not yet upgraded: whoever set it may know it'}
            , and as an administrator this account could change every organization, user, key and setting of the tenant. Set a new password on the Users screen
            first, or ask the person to sign up with an account of their own.
          </p>
        </div>
      ) : null}
      <dl className="facts">
        <Fact label="Email" value={c.user.email} />
        <Fact label="User id" value={c.user.id} />
        <Fact label="Created" value={when(c.user.created_at)} />
        <Fact label="Password" value={passwordFact(c)} />
      </dl>
      <h3>Organizations</h3>
      {c.organizations.length === 0 ? (
        <p className="empty">Not a member of any organization.</p>
      ) : (
        <ul>
          {c.organizations.map((o) => (
            <li key={o.id}>
              {o.name} <span className="muted">({o.role})</span>
            </li>
          ))}
          {total > c.organizations.length ? <li className="muted">and {total - c.organizations.length} more</li> : null}
        </ul>
      )}
      {c.already_admin ? (
        <p className="ok">{c.user.email} already is an administrator.</p>
      ) : reasons.length ? (
        <ConfirmButton
          label="Make administrator"
          question={`Make ${c.user.email} an administrator of the whole tenant, although ${reasons.join(' and ')}?`}
          confirmLabel="Yes, make administrator"
          onConfirm={make}
        />
      ) : (
        <button type="button" className="primary" disabled={grant.busy} onClick={() => void grant.run(make)}>
          Make administrator
        </button>
      )}
      <ErrorNote error={grant.error} />
    </section>
  );
}
