/** Forms and actions: one error (and busy/done) state per form instead of a hand-written try/catch each. */
import { type FormEvent, type ReactNode, useState } from 'react';
import { ErrorNote } from '../ui';

/** Runs an async action, keeping its error (shown with ErrorNote) and whether it is in flight. */
export function useAction() {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<void>): Promise<boolean> => {
    setError(undefined);
    setBusy(true);
    try {
      await action();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}

/**
 * A form's submit handler: reads its FormData, runs `action`, and on success resets the form
 * (`reset`, for uncontrolled create forms) and sets `done` (for a "saved" status line).
 * A second submit while one is in flight is ignored. `run` runs another action of the same form
 * (sharing its error).
 */
export function useSubmit(action: (data: FormData) => Promise<void>, options: { reset?: boolean } = {}) {
  const { error, busy, run } = useAction();
  const [done, setDone] = useState(false);
  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (busy) return;
    const form = e.currentTarget;
    setDone(false);
    if (await run(() => action(new FormData(form)))) {
      if (options.reset) form.reset();
      setDone(true);
    }
  };
  return { onSubmit, error, busy, done, run };
}

/**
 * A form in a card: heading, fields, the API's error (role="alert"), an optional status line
 * (role="status") and the submit button.
 */
export function FormCard({
  id,
  title,
  heading = 'h2',
  submit,
  form,
  status,
  primary = true,
  children,
}: {
  id: string;
  title: string;
  heading?: 'h2' | 'h3';
  submit: string;
  form: ReturnType<typeof useSubmit>;
  /** Shown in a role="status" line when given (e.g. "Saved."); omit for create forms. */
  status?: string;
  primary?: boolean;
  children: ReactNode;
}) {
  const Heading = heading;
  return (
    <form className="card" onSubmit={form.onSubmit} aria-labelledby={id} aria-busy={form.busy}>
      <Heading id={id}>{title}</Heading>
      {children}
      <ErrorNote error={form.error} />
      {status !== undefined ? (
        <p role="status" className="muted">
          {status}
        </p>
      ) : null}
      <button type="submit" className={primary ? 'primary' : undefined}>
        {submit}
      </button>
    </form>
  );
}
