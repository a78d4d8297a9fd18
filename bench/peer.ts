/**
 * The peer: node-oidc-provider 9 configured like Keyhall's client_credentials path
 * (client_secret_basic, EdDSA-signed JWT access tokens through resource indicators, DPoP, the
 * library's in-memory adapter). Its JWT access tokens cannot be introspected (the library refuses
 * structured tokens at /introspect), so the introspection scenario uses its opaque tokens.
 */
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export const PEER_RESOURCE = 'urn:bench:api';
/** Tokens for this resource are opaque (stored in the adapter), hence introspectable. */
export const PEER_OPAQUE_RESOURCE = 'urn:bench:opaque';

export async function startPeer(): Promise<{
  port: number;
  clientId: string;
  clientSecret: string;
  resource: string;
  opaqueResource: string;
  close: () => Promise<void>;
}> {
  const { privateKey } = await generateKeyPair('EdDSA', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'peer-ed25519', alg: 'EdDSA', use: 'sig' };
  const clientId = 'bench-client';
  const clientSecret = 'bench-secret-0123456789abcdef0123456789abcdef';
  // The issuer's port is fixed after listen; a provisional issuer would not match `aud`/`htu`.
  const server = (await import('node:http')).createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'read',
        id_token_signed_response_alg: 'EdDSA',
      },
    ],
    jwks: { keys: [jwk as never] },
    scopes: ['read'],
    enabledJWA: { dPoPSigningAlgValues: ['ES256', 'EdDSA'] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      dPoP: { enabled: true, nonceSecret: undefined },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? PEER_RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) =>
          resource === PEER_OPAQUE_RESOURCE
            ? { scope: 'read', audience: resource, accessTokenTTL: 600, accessTokenFormat: 'opaque' }
            : { scope: 'read', audience: resource, accessTokenTTL: 600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'EdDSA' } } },
      },
    },
  });
  // oidc-provider logs nothing by default; its in-memory adapter is the library's own.
  server.on('request', provider.callback());
  return {
    port,
    clientId,
    clientSecret,
    resource: PEER_RESOURCE,
    opaqueResource: PEER_OPAQUE_RESOURCE,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
