// A server-rendered web app that signs users in with Keyhall: openid-client and Express.
// Run: CLIENT_ID=cli_… CLIENT_SECRET=cs_… npx tsx docs/guides/web-app/app.ts
import { randomBytes } from 'node:crypto';
import express from 'express';
import * as client from 'openid-client';

const issuer = new URL(process.env.KEYHALL_ISSUER ?? 'http://localhost:3000');
const { CLIENT_ID, CLIENT_SECRET } = process.env;
if (!CLIENT_ID || !CLIENT_SECRET) throw new Error('Set CLIENT_ID and CLIENT_SECRET to the client registered in step 1.');
const port = Number(process.env.PORT ?? 8000);
const redirectUri = `http://localhost:${port}/callback`;

// Plain http is for a Keyhall on your own machine; a deployed issuer is https and needs no option.
const options = issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined;
const config = await client.discovery(issuer, CLIENT_ID, CLIENT_SECRET, undefined, options);

// Sessions in memory, keyed by a random cookie: use a real session store in production.
type Session = { pending?: { verifier: string; state: string; nonce: string }; user?: client.IDToken };
const sessions = new Map<string, Session>();
const COOKIE = 'webapp_session'; // cookies ignore ports: do not reuse a Keyhall cookie name on localhost

function session(req: express.Request, res: express.Response): Session {
  let id = /(?:^|;\s*)webapp_session=([\w-]{43})(?:;|$)/.exec(req.headers.cookie ?? '')?.[1];
  if (!id || !sessions.has(id)) {
    id = randomBytes(32).toString('base64url');
    sessions.set(id, {});
    res.cookie(COOKIE, id, { httpOnly: true, sameSite: 'lax', path: '/' });
  }
  return sessions.get(id)!;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const app = express();

app.get('/', (req, res) => {
  const { user } = session(req, res);
  res.type('html').send(
    user
      ? `<h1>Hello, ${escape(String(user.email))}</h1><p>Your ID token says:</p><pre>${escape(JSON.stringify(user, null, 2))}</pre>`
      : '<h1>Welcome</h1><a href="/login">Sign in</a>',
  );
});

// Send the browser to Keyhall's /authorize, with PKCE, state and nonce kept in the session.
app.get('/login', async (req, res) => {
  const verifier = client.randomPKCECodeVerifier();
  const pending = { verifier, state: client.randomState(), nonce: client.randomNonce() };
  session(req, res).pending = pending;
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  res.redirect(url.href);
});

// Keyhall sends the browser back with a code: redeem it (checking state, iss, PKCE and the ID token).
app.get('/callback', async (req, res) => {
  const s = session(req, res);
  if (!s.pending) return res.status(400).send('No sign-in in progress: start again at /login.');
  try {
    const tokens = await client.authorizationCodeGrant(config, new URL(req.originalUrl, redirectUri), {
      pkceCodeVerifier: s.pending.verifier,
      expectedState: s.pending.state,
      expectedNonce: s.pending.nonce,
      idTokenExpected: true,
    });
    s.user = tokens.claims();
    res.redirect('/');
  } catch (err) {
    res.status(400).send(`Sign-in failed: ${escape(String(err))}`);
  } finally {
    delete s.pending;
  }
});

app.listen(port, () => console.log(`Web app on http://localhost:${port}`));
