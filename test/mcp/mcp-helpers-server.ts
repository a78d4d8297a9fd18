import { REDIRECT, S256, type SigninTestServer, signIn, VERIFIER } from '../signin/helpers.js';

export const ACCEPT = 'application/json, text/event-stream';

/**
 * A user's access token for /mcp with `scope`, by the code flow with PKCE of a first-party public
 * client allowed the /mcp resource (no consent page in the way).
 */
export async function mcpUserToken(s: SigninTestServer, email: string, scope: string, resource = `${s.issuer}/mcp`): Promise<string> {
  const c = await s.publicClient({ scope: 'mcp:read mcp:connected_accounts mcp:credentials', allowed_resources: [resource, `${s.issuer}/other`] });
  const params = new URLSearchParams({
    client_id: c.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope,
    resource,
    code_challenge: await S256(VERIFIER),
    code_challenge_method: 'S256',
  });
  const b = s.browser();
  const cb = await signIn(b, (await b.get(`/authorize?${params}`)).headers.location!, email);
  const code = new URL(cb.headers.location!).searchParams.get('code');
  if (!code) throw new Error(`no code: ${cb.status} ${cb.headers.location}`);
  const t = await s.post('/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: VERIFIER,
    client_id: c.client_id,
    resource,
  });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${t.text}`);
  return t.json().access_token as string;
}

let id = 0;

/** One JSON-RPC request to /mcp, as an MCP client sends it. */
export function rpc(
  s: SigninTestServer,
  authorization: string | undefined,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return s.request({
    method: 'POST',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...(authorization ? { authorization } : {}), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
  });
}

/** Calls a tool and returns its result (`isError` and the JSON it answered). */
export async function callTool(s: SigninTestServer, token: string, name: string, args: Record<string, unknown> = {}) {
  const r = await rpc(s, `Bearer ${token}`, 'tools/call', { name, arguments: args });
  if (r.status !== 200) throw new Error(`tools/call ${name}: ${r.status} ${r.text}`);
  const result = r.json().result as { isError?: boolean; content: Array<{ text: string }> };
  if (!result) throw new Error(`tools/call ${name}: ${r.text}`);
  const text = result.content[0]!.text;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { isError: result.isError === true, body, text };
}
