import { type JSX, type MouseEvent, useEffect, useRef, useState } from 'react';
import { ApiError, own, setCsrf } from './api';
import { navigate, usePath } from './router';
import { Administrators } from './screens/Administrators';
import { ApiKeys } from './screens/ApiKeys';
import { Directory } from './screens/Directory';
import { Applications } from './screens/Applications';
import { Events } from './screens/Events';
import { Organizations } from './screens/Organizations';
import { Overview } from './screens/Overview';
import { Setup } from './screens/Setup';
import { Users } from './screens/Users';
import { Webhooks } from './screens/Webhooks';
import { ConnectedAccounts } from './screens/ConnectedAccounts';
import { Credentials } from './screens/Credentials';
import { MfaPolicy } from './screens/MfaPolicy';
import { PageTexts } from './screens/PageTexts';
import { Email } from './screens/Email';
import { Roles } from './screens/Roles';
import { Social } from './screens/Social';
import { Sso } from './screens/Sso';
import { describeError, Loading } from './ui';

interface Session {
  user: { id: string; email: string };
  tenant: { id: string; issuer: string };
  permissions: string[];
  csrf_token: string;
}

const SCREENS: Array<{ path: string; title: string; render: (s: Session) => JSX.Element }> = [
  { path: '/console/', title: 'Overview', render: () => <Overview /> },
  { path: '/console/organizations', title: 'Organizations', render: () => <Organizations /> },
  { path: '/console/users', title: 'Users', render: () => <Users /> },
  { path: '/console/roles', title: 'Roles', render: () => <Roles /> },
  { path: '/console/api-keys', title: 'API keys', render: (s: Session) => <ApiKeys permissions={s.permissions} /> },
  { path: '/console/webhooks', title: 'Webhooks', render: () => <Webhooks /> },
  { path: '/console/directory', title: 'Directory', render: () => <Directory /> },
  { path: '/console/applications', title: 'Applications', render: () => <Applications /> },
  { path: '/console/sso', title: 'SSO', render: () => <Sso /> },
  { path: '/console/social', title: 'Social sign-in', render: () => <Social /> },
  { path: '/console/mfa-policy', title: 'MFA policy', render: () => <MfaPolicy /> },
  { path: '/console/page-texts', title: 'Page texts', render: () => <PageTexts /> },
  { path: '/console/email', title: 'Email', render: () => <Email /> },
  { path: '/console/connected-accounts', title: 'Connected accounts', render: () => <ConnectedAccounts /> },
  { path: '/console/credentials', title: 'Credentials', render: () => <Credentials /> },
  { path: '/console/events', title: 'Events', render: () => <Events /> },
  { path: '/console/administrators', title: 'Administrators', render: (s: Session) => <Administrators me={s.user.id} /> },
];

export function App() {
  const path = usePath();
  if (path === '/console/setup') return <Setup />;
  return <Signed path={path} />;
}

function Signed({ path }: { path: string }) {
  const [session, setSession] = useState<Session>();
  const [problem, setProblem] = useState<unknown>();
  useEffect(() => {
    own<Session>('GET', '/session').then(
      (s) => {
        setCsrf(s.csrf_token);
        setSession(s);
      },
      (err: unknown) => {
        // Not signed in: the tenant's own hosted login, back here afterwards.
        if (err instanceof ApiError && err.status === 401) window.location.assign(`/login?return_to=${encodeURIComponent(window.location.pathname)}`);
        else setProblem(err);
      },
    );
  }, []);
  const screen = SCREENS.find((s) => s.path === path) ?? SCREENS[0]!;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${screen.title} · Keyhall console`;
  }, [screen.title]);

  if (problem) {
    return (
      <main className="narrow">
        <h1>Keyhall console</h1>
        <p className="error" role="alert">
          {describeError(problem)}
        </p>
        <p>
          <a href="/logout">Sign out</a> and sign in with an administrator account.
        </p>
      </main>
    );
  }
  if (!session) {
    return (
      <main className="narrow">
        <Loading what="the console" />
      </main>
    );
  }
  const go = (e: MouseEvent<HTMLAnchorElement>, to: string) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(to);
    heading.current?.focus();
  };
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Keyhall console</span>
        <span className="who">
          <span className="muted">{session.user.email}</span> <a href="/logout">Sign out</a>
        </span>
      </header>
      <div className="frame">
        <nav aria-label="Console" className="side">
          <ul>
            {SCREENS.map((s) => (
              <li key={s.path}>
                <a href={s.path} aria-current={s.path === screen.path ? 'page' : undefined} onClick={(e) => go(e, s.path)}>
                  {s.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main">
          <h1 ref={heading} tabIndex={-1}>
            {screen.title}
          </h1>
          {screen.render(session)}
        </main>
      </div>
    </>
  );
}
