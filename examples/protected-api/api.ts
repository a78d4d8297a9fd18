// An API that accepts Keyhall access tokens, verified by @keyhall/sdk: Bearer and DPoP-bound
// tokens, EdDSA or RS256, the required scope per route.
// Run: KEYHALL_ISSUER=http://localhost:3000 npx tsx api.ts
import http from 'node:http';
import { AccessTokenError, parseAuthorization, verifyAccessToken } from '@keyhall/sdk';

const issuer = process.env.KEYHALL_ISSUER ?? 'http://localhost:3000';
// The resource server's identifier: tokens for this API carry it in `aud`.
const audience = process.env.API_AUDIENCE ?? 'https://reports.example.com';
const port = Number(process.env.PORT ?? 4000);
// Where clients call this API: a DPoP proof names this URL (`htu`). Behind a proxy, the public URL.
const publicUrl = process.env.PUBLIC_URL ?? `http://localhost:${port}`;

/** Each route and the scope a token needs for it. */
const routes: Record<string, { scope: string; body: (sub: string) => unknown }> = {
  'GET /reports': { scope: 'reports:read', body: (sub) => ({ reports: [{ id: 'r1', title: 'Daily sign-ups' }], caller: sub }) },
  'POST /reports': { scope: 'reports:write', body: (sub) => ({ created: 'r2', caller: sub }) },
};

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

http
  .createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', publicUrl).pathname;
    const route = routes[`${req.method} ${path}`];
    if (!route) return send(res, 404, { error: 'not_found' });
    const presented = parseAuthorization(req.headers.authorization);
    // RFC 6750: a request without a token gets a bare challenge.
    if (!presented) return send(res, 401, { error: 'token_required' }, { 'www-authenticate': 'Bearer' });
    try {
      const claims = await verifyAccessToken(presented.token, {
        issuer,
        audience,
        requiredPermissions: [route.scope],
        scheme: presented.scheme,
        dpop: { proof: req.headers.dpop as string | undefined, method: req.method!, url: `${publicUrl}${req.url}` },
      });
      send(res, req.method === 'POST' ? 201 : 200, route.body(claims.sub));
    } catch (err) {
      if (!(err instanceof AccessTokenError)) throw err;
      send(res, err.status, { error: err.error, error_description: err.error_description }, { 'www-authenticate': err.wwwAuthenticate });
    }
  })
  .listen(port, () => console.log(`Reports API on ${publicUrl}/reports`));
