import { type FormEvent, useEffect, useState } from 'react';
import { api, setCsrf } from '../api';
import { ErrorNote, Field, Loading } from '../ui';

/** The one-time setup link: creates the tenant's first administrator. */
export function Setup() {
  const token = new URLSearchParams(window.location.search).get('token') ?? '';
  const [open, setOpen] = useState<boolean>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = 'Set up · Keyhall console';
    api<{ open: boolean; csrf_token: string }>('GET', `/setup?token=${encodeURIComponent(token)}`).then(
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

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    if (form.get('password') !== form.get('confirm')) {
      setError(new Error('The two passwords differ.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const r = await api<{ user: { email: string }; sign_in: string }>('POST', '/setup', { token, email: form.get('email'), password: form.get('password') });
      setDone(r.sign_in);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="narrow">
      <h1>Set up the console</h1>
      {open === undefined ? <Loading what="the setup link" /> : null}
      {done ? (
        <>
          <p role="status">Your administrator account is ready. Sign in with it to open the console.</p>
          <p>
            <a className="button" href={done}>
              Continue to sign in
            </a>
          </p>
          <p>
            Recommended: protect the account with a second factor. <a href="/login?return_to=%2Fmfa">Sign in and add a passkey or an authenticator app</a>, then open{' '}
            <a href="/console/">the console</a>.
          </p>
        </>
      ) : open ? (
        <form onSubmit={submit} className="card">
          <p>Create the first administrator of this tenant. This link works once.</p>
          <Field id="setup-email" label="Email">
            <input id="setup-email" name="email" type="email" autoComplete="username" required />
          </Field>
          <Field id="setup-password" label="Password" hint="At least 8 characters.">
            <input id="setup-password" name="password" type="password" autoComplete="new-password" minLength={8} required aria-describedby="setup-password-hint" />
          </Field>
          <Field id="setup-confirm" label="Repeat the password">
            <input id="setup-confirm" name="confirm" type="password" autoComplete="new-password" minLength={8} required />
          </Field>
          <ErrorNote error={error} />
          <button type="submit" className="primary" disabled={busy}>
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
