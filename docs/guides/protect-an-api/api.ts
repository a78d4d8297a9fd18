// An API that accepts Keyhall access tokens, verified locally with jose.
// Run: npx tsx docs/guides/protect-an-api/api.ts
import http from 'node:http';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

const issuer = process.env.KEYHALL_ISSUER ?? 'http://localhost:3000';
// The resource server's identifier: tokens for this API carry it in `aud`.
const audience = 'https://reports.example.com';
// The algorithm the resource server chose (`access_token_signing_alg`). Pin it: a token signed
// any other way is refused. Keyhall's default is EdDSA; this guide registered RS256.
const algorithms = ['RS256'];
const port = Number(process.env.PORT ?? 4000);

// The tenant's signing keys, fetched once and cached by jose (and again when a new `kid` appears,
// after a `keyhall keys rotate`).
const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));

/** The token's claims, or null when there is no valid token for this API. */
async function authenticate(req: http.IncomingMessage): Promise<JWTPayload | null> {
  const [scheme, token] = (req.headers.authorization ?? '').split(' ');
  if (scheme?.toLowerCase() !== 'bearer' || !token) return null;
  try {
    // Checks the signature, `typ: at+jwt` (an ID token is not an access token), iss, aud, exp, nbf.
    const { payload } = await jwtVerify(token, jwks, { issuer, audience, algorithms, typ: 'at+jwt' });
    return payload;
  } catch {
    return null;
  }
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

http
  .createServer(async (req, res) => {
    if (req.method !== 'GET' || req.url !== '/reports') return send(res, 404, { error: 'not_found' });
    const claims = await authenticate(req);
    if (!claims && !req.headers.authorization) {
      // RFC 6750: a request without a token gets a bare challenge.
      return send(res, 401, { error: 'token_required' }, { 'www-authenticate': 'Bearer' });
    }
    if (!claims) return send(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer error="invalid_token"' });
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (!scopes.includes('reports:read')) {
      return send(res, 403, { error: 'insufficient_scope' }, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="reports:read"' });
    }
    send(res, 200, { reports: [{ id: 'r1', title: 'Daily sign-ups' }], caller: claims.sub });
  })
  .listen(port, () => console.log(`Reports API on http://localhost:${port}/reports`));
