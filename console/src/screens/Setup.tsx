import { useEffect, useRef, useState } from 'react';
import { own, setCsrf } from '../api';
import { useAction, useSubmit } from '../components/forms';
import { ErrorNote, Field, Loading } from '../ui';

interface Created {
  email: string;
  /** The tenant's MFA policy is `required`: the session is usable only once a factor is added. */
  secondFactorRequired: boolean;
}

/**
 * The one-time setup link: creates the tenant's first administrator, signs them in, then offers a
 * passkey and an authenticator app right here (docs/console.md).
 */
export function Setup() {
  const token = new URLSearchParams(window.location.search).get('token') ?? '';
  const [open, setOpen] = useState<boolean>();
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<Created>();
  useEffect(() => {
    document.title = 'Set up · Keyhall console';
    own<{ open: boolean; csrf_token: string }>('GET', `/setup?token=${encodeURIComponent(token)}`).then(
      (r) => {
        setCsrf(r.csrf_token);
        setOpen(r.open);
      },
      (err: unknown) => {
        setError(err);
        setOpen(false);
      },
    );
  }, [token]);

  const submit = useSubmit(async (form) => {
    if (form.get('password') !== form.get('confirm')) throw new Error('The two passwords differ.');
    const r = await own<{ user: { email: string }; second_factor_required: boolean }>('POST', '/setup', {
      token,
      email: form.get('email'),
      password: form.get('password'),
    });
    setCreated({ email: r.user.email, secondFactorRequired: r.second_factor_required });
  });

  return (
    <main className="narrow">
      <h1>Set up the console</h1>
      {open === undefined ? <Loading what="the setup link" /> : null}
      {created ? (
        <Enrolment created={created} />
      ) : open ? (
        <form onSubmit={submit.onSubmit} className="card">
          <p>Create the first administrator of this tenant. This link works once.</p>
          <Field id="setup-email" label="Email">
            <input id="setup-email" name="email" type="email" autoComplete="username" required />
          </Field>
          <Field id="setup-password" label="Password" hint="At least 8 characters.">
            <input
              id="setup-password"
              name="password"
              type="password"
              autoComplete="new-password"
              minLength={8}
              required
              aria-describedby="setup-password-hint"
            />
          </Field>
          <Field id="setup-confirm" label="Repeat the password">
            <input id="setup-confirm" name="confirm" type="password" autoComplete="new-password" minLength={8} required />
          </Field>
          <ErrorNote error={submit.error} />
          <button type="submit" className="primary" disabled={submit.busy}>
            Create administrator
          </button>
        </form>
      ) : open === false ? (
        <>
          <ErrorNote error={error} />
          <p className="error" role="alert">
            This setup link has expired or was already used. Ask the operator for a new one: <code>keyhall admin create --tenant &lt;host&gt; --link</code>.
          </p>
        </>
      ) : null}
    </main>
  );
}

/** After the administrator is created (and signed in): a passkey, an authenticator app, or skip. */
function Enrolment({ created }: { created: Created }) {
  const [added, setAdded] = useState<string[]>([]);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const done = (what: string) => setAdded((a) => [...a, what]);
  const canContinue = !created.secondFactorRequired || added.length > 0;
  return (
    <>
      <p role="status" className="ok">
        Your administrator account <strong>{created.email}</strong> is ready, and you are signed in.
      </p>
      <h2 ref={heading} tabIndex={-1}>
        Protect the account with a second factor
      </h2>
      {created.secondFactorRequired ? (
        <p className="warning">This tenant requires a second factor: add a passkey or an authenticator app to open the console.</p>
      ) : (
        <p>Recommended: an administrator can change everything in this tenant. Add a passkey, an authenticator app, or both.</p>
      )}
      {added.length > 0 ? (
        <ul aria-label="Added sign-in methods" className="added">
          {added.map((a) => (
            <li key={a} className="ok">
              {a}
            </li>
          ))}
        </ul>
      ) : null}
      <PasskeyEnrolment onAdded={(name) => done(`Passkey “${name}” added.`)} />
      <TotpEnrolment onAdded={() => done('Authenticator app set up.')} />
      <p>
        {canContinue ? (
          <a className="button" href="/console/" id="setup-continue">
            {added.length > 0 ? 'Continue to the console' : 'Skip for now and open the console'}
          </a>
        ) : null}
      </p>
      <p className="muted">
        You can manage your sign-in methods later on <a href="/mfa">your sign-in methods page</a>.
      </p>
    </>
  );
}

const passkeysSupported = () => typeof window.PublicKeyCredential === 'function' && typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function';

/** WebAuthn registration against /console/api/mfa/passkeys (the hosted pages' MfaService). */
function PasskeyEnrolment({ onAdded }: { onAdded: (name: string) => void }) {
  const [count, setCount] = useState(0);
  const add = useSubmit(
    async (data) => {
      const name = String(data.get('name') ?? '').trim();
      const options = await own<PublicKeyCredentialCreationOptionsJSON>('POST', '/mfa/passkeys/options');
      let credential: Credential | null;
      try {
        credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) });
      } catch (err) {
        const why = err instanceof DOMException ? err.name : 'error';
        throw new Error(`The passkey was not created (${why}). Try again, or use another authenticator.`);
      }
      if (!(credential instanceof PublicKeyCredential)) throw new Error('The passkey was not created. Try again.');
      const r = await own<{ passkey: { name: string } }>('POST', '/mfa/passkeys', { credential: credential.toJSON(), ...(name ? { name } : {}) });
      setCount((c) => c + 1);
      onAdded(r.passkey.name);
    },
    { reset: true },
  );
  if (!passkeysSupported()) {
    return (
      <section className="card" aria-labelledby="setup-passkey">
        <h3 id="setup-passkey">Add a passkey</h3>
        <p>
          This browser cannot create a passkey here. Use <a href="/mfa">your sign-in methods page</a> instead, or set up an authenticator app below.
        </p>
      </section>
    );
  }
  return (
    <form className="card" onSubmit={add.onSubmit} aria-labelledby="setup-passkey">
      <h3 id="setup-passkey">Add a passkey</h3>
      <p>Sign in with your fingerprint, face, screen lock or a security key instead of a code.</p>
      <Field id="passkey-name" label="Name of the passkey (optional)">
        <input id="passkey-name" name="name" maxLength={100} placeholder="e.g. Work laptop" />
      </Field>
      <ErrorNote error={add.error} />
      <button type="submit" className="primary" disabled={add.busy}>
        {count > 0 ? 'Add another passkey' : 'Add a passkey'}
      </button>
    </form>
  );
}

interface TotpStart {
  secret: string;
  otpauth_uri: string;
  qr_svg: string;
}

/** Authenticator-app enrolment: QR code and key, a first code, then the recovery codes (shown once). */
function TotpEnrolment({ onAdded }: { onAdded: () => void }) {
  const [start, setStart] = useState<TotpStart>();
  const [codes, setCodes] = useState<string[] | null>();
  const begin = useAction();
  const confirm = useSubmit(async (data) => {
    const r = await own<{ recovery_codes: string[] | null }>('POST', '/mfa/totp/confirm', { code: String(data.get('code') ?? '').trim() });
    setCodes(r.recovery_codes);
    onAdded();
  });
  if (codes !== undefined) {
    return (
      <section className="card" aria-labelledby="setup-totp">
        <h3 id="setup-totp">Authenticator app</h3>
        <p className="ok">The authenticator app is set up.</p>
        {codes ? (
          <div className="secret">
            <h4>Your recovery codes</h4>
            <p className="warning">Each code works once, in place of your authenticator app or passkey. They are shown only now: store them somewhere safe.</p>
            <ul className="codes" id="recovery-codes">
              {codes.map((c) => (
                <li key={c}>
                  <code>{c}</code>
                </li>
              ))}
            </ul>
          </div>
        ) : null}
      </section>
    );
  }
  return (
    <section className="card" aria-labelledby="setup-totp">
      <h3 id="setup-totp">Set up an authenticator app (TOTP)</h3>
      {start ? (
        <form onSubmit={confirm.onSubmit}>
          <p>Scan this code with your authenticator app, then enter the 6-digit code it shows.</p>
          <img
            className="qr"
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(start.qr_svg)}`}
            alt="QR code of the authenticator app key"
            width={200}
            height={200}
          />
          <p>
            Or enter this key by hand: <code id="totp-secret">{start.secret}</code>
          </p>
          <p>
            <a href={start.otpauth_uri}>Open in an authenticator app on this device</a>
          </p>
          <Field id="totp-code" label="Code from the app">
            <input id="totp-code" name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required />
          </Field>
          <ErrorNote error={confirm.error} />
          <button type="submit" className="primary" disabled={confirm.busy}>
            Confirm
          </button>
        </form>
      ) : (
        <>
          <p>Use a code from an app such as a password manager or an authenticator on your phone.</p>
          <ErrorNote error={begin.error} />
          <button type="button" onClick={() => void begin.run(async () => setStart(await own<TotpStart>('POST', '/mfa/totp')))} disabled={begin.busy}>
            Set up an authenticator app
          </button>
        </>
      )}
    </section>
  );
}
