// Sign-in with Keyhall in the browser: the authorization code flow with PKCE, a public client,
// oauth4webapi. Tokens stay in memory (never in localStorage).
import * as oauth from 'oauth4webapi';

// Set by server.ts when it bundles the app (esbuild `define`).
declare const KEYHALL_ISSUER: string;
declare const CLIENT_ID: string;

const issuer = new URL(KEYHALL_ISSUER);
const client: oauth.Client = { client_id: CLIENT_ID };
const clientAuth = oauth.None(); // a browser cannot keep a secret
const redirectUri = `${location.origin}/callback`;
// Plain http is for a Keyhall on your own machine; a deployed issuer is https and needs no option.
const http = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};

let discovered: Promise<oauth.AuthorizationServer> | undefined;
/** Keyhall's discovery document (public: answered to any origin), fetched once. */
const server = () => (discovered ??= oauth.discoveryRequest(issuer, http).then((res) => oauth.processDiscoveryResponse(issuer, res)));

export type User = oauth.UserInfoResponse;

/** Sends the browser to Keyhall's sign-in; the PKCE verifier stays in this tab. */
export async function signIn(): Promise<void> {
  const as = await server();
  const verifier = oauth.generateRandomCodeVerifier();
  sessionStorage.setItem('pkce_verifier', verifier);
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: CLIENT_ID,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email profile',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url);
}

/**
 * Back from Keyhall with a code: redeem it at /token (a cross-origin POST, readable because
 * Keyhall answers CORS for the client's `allowed_origins`) and read /userinfo (a GET with an
 * Authorization header: the browser sends a preflight first).
 */
export async function finishSignIn(): Promise<User> {
  const verifier = sessionStorage.getItem('pkce_verifier');
  sessionStorage.removeItem('pkce_verifier');
  if (!verifier) throw new Error('no sign-in in progress in this tab');
  const as = await server();
  // The answer must come from this issuer (`iss`) and carry a code; PKCE does the job of `state`.
  const params = oauth.validateAuthResponse(as, client, new URL(location.href), oauth.expectNoState);
  const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, http);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  const { sub } = oauth.getValidatedIdTokenClaims(tokens)!;
  const userinfo = await oauth.userInfoRequest(as, client, tokens.access_token, http);
  return oauth.processUserInfoResponse(as, client, sub, userinfo);
}
