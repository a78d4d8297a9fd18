import { useEffect, useState } from 'react';
import { finishSignIn, signIn, type User } from './auth.js';

type State = { step: 'signed-out' } | { step: 'working' } | { step: 'signed-in'; user: User } | { step: 'failed'; message: string };

export function App() {
  const [state, setState] = useState<State>(location.pathname === '/callback' ? { step: 'working' } : { step: 'signed-out' });

  useEffect(() => {
    if (location.pathname !== '/callback') return;
    finishSignIn()
      .then((user) => setState({ step: 'signed-in', user }))
      .catch((err: Error) => setState({ step: 'failed', message: err.message }))
      .finally(() => history.replaceState(null, '', '/')); // the code is spent: keep it out of the address bar
  }, []);

  switch (state.step) {
    case 'working':
      return <h1>Signing in…</h1>;
    case 'failed':
      return <h1>Sign-in failed: {state.message}</h1>;
    case 'signed-in':
      return (
        <>
          <h1>Signed in as {state.user.email}</h1>
          <button onClick={() => setState({ step: 'signed-out' })}>Forget me</button>
          <pre id="claims">{JSON.stringify(state.user, null, 2)}</pre>
        </>
      );
    default:
      return (
        <>
          <h1>Welcome</h1>
          <button onClick={() => void signIn()}>Sign in</button>
        </>
      );
  }
}
