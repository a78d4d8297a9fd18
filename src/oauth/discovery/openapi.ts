/**
 * The OpenAPI 3.1 description of the tenant's OAuth 2.0 / OpenID Connect endpoints, served at
 * /openapi/oauth.json (docs/api.md). Written by hand from the protocol cores: these endpoints
 * take form bodies whose members depend on `grant_type`, which no route schema expresses.
 * Discovery (metadata.ts) stays the normative list of what the server supports.
 */
import { DPOP_ALGS } from '../dpop/verify.js';
import { OIDC_SCOPES, PROMPT_VALUES } from '../authorize/validate.js';
import { REQUEST_OBJECT_ALGS } from '../authorize/request-object.js';
import { JWKS_PATH } from './metadata.js';

type Json = Record<string, unknown>;
const FORM = 'application/x-www-form-urlencoded';
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = (description: string, extra: Json = {}) => ({ type: 'string', description, ...extra });
const GRANT = {
  code: 'authorization_code',
  refresh: 'refresh_token',
  client: 'client_credentials',
  exchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
  device: 'urn:ietf:params:oauth:grant-type:device_code',
} as const;

/** Client authentication members of a form body (client_secret_post, private_key_jwt, none). */
const clientAuthFields: Json = {
  client_id: str('The client (required for public clients and client_secret_post)'),
  client_secret: str('client_secret_post only; prefer HTTP Basic'),
  client_assertion_type: { type: 'string', const: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', description: 'private_key_jwt (RFC 7523)' },
  client_assertion: str('private_key_jwt: a JWT signed with a key of the client'),
};
const resourceField = { resource: str('RFC 8707 resource indicator: the API the token is for (an absolute URI)') };

const authorizationParams: Json = {
  response_type: { type: 'string', enum: ['code'] },
  client_id: str('The client'),
  redirect_uri: str('One of the client’s registered redirect URIs'),
  scope: str(`Space-separated scopes; OpenID scopes: ${OIDC_SCOPES.join(', ')}`),
  state: str('Opaque value returned to the redirect URI'),
  nonce: str('Copied into the ID token'),
  code_challenge: str('PKCE (RFC 7636): BASE64URL(SHA-256(code_verifier)), 43 characters', { pattern: '^[A-Za-z0-9_-]{43}$' }),
  code_challenge_method: { type: 'string', enum: ['S256'] },
  prompt: { type: 'string', description: `Space-separated: ${PROMPT_VALUES.join(', ')}` },
  max_age: { type: 'integer', minimum: 0, description: 'Maximum seconds since the user last signed in' },
  login_hint: str('The email to pre-fill'),
  ui_locales: str(
    'Space-separated BCP 47 language tags, preferred first: the language of the hosted pages (ui_locales_supported in discovery), before Accept-Language',
    { maxLength: 256 },
  ),
  id_token_hint: str('A previously issued ID token'),
  response_mode: { type: 'string', enum: ['query'] },
  organization: str('An organization id or slug to sign in to'),
  dpop_jkt: str('RFC 9449 §10: the JWK thumbprint the code is bound to'),
  request_uri: str('A request_uri from /par (urn:ietf:params:oauth:request_uri:…); the other parameters are then taken from that request'),
  request: str(
    `RFC 9101: a request object, a JWS (${REQUEST_OBJECT_ALGS.join(', ')}) signed with a key of the client (jwks or jwks_uri) with iss = client_id, aud = issuer, exp, client_id equal to the query's; only its parameters are used. Errors: invalid_request_object`,
  ),
  ...resourceField,
};

const tokenForms: Json = {
  AuthorizationCodeGrant: {
    type: 'object',
    description: 'RFC 6749 §4.1.3 with PKCE (RFC 7636)',
    required: ['grant_type', 'code', 'redirect_uri', 'code_verifier'],
    properties: {
      grant_type: { const: GRANT.code },
      code: str('The code from /authorize'),
      redirect_uri: str('The redirect URI of the authorization request'),
      code_verifier: str('PKCE verifier (43–128 characters)'),
      ...resourceField,
      ...clientAuthFields,
    },
  },
  RefreshTokenGrant: {
    type: 'object',
    description: 'RFC 6749 §6; the refresh token is rotated on every use',
    required: ['grant_type', 'refresh_token'],
    properties: {
      grant_type: { const: GRANT.refresh },
      refresh_token: str('The refresh token'),
      scope: str('A subset of the granted scopes'),
      ...resourceField,
      ...clientAuthFields,
    },
  },
  ClientCredentialsGrant: {
    type: 'object',
    description: 'RFC 6749 §4.4: a confidential client acting for itself',
    required: ['grant_type'],
    properties: { grant_type: { const: GRANT.client }, scope: str('Scopes among those registered for the client'), ...resourceField, ...clientAuthFields },
  },
  DeviceCodeGrant: {
    type: 'object',
    description:
      'RFC 8628 §3.4: poll with the device_code from /device_authorization, no sooner than `interval` seconds apart, until the person approves or denies at /activate',
    required: ['grant_type', 'device_code'],
    properties: { grant_type: { const: GRANT.device }, device_code: str('The device_code from /device_authorization'), ...clientAuthFields },
  },
  TokenExchangeGrant: {
    type: 'object',
    description: 'RFC 8693 token exchange, within the client’s `token_exchange` policy',
    required: ['grant_type', 'subject_token', 'subject_token_type'],
    properties: {
      grant_type: { const: GRANT.exchange },
      subject_token: str('The token to exchange'),
      subject_token_type: str('urn:ietf:params:oauth:token-type:access_token, …'),
      actor_token: str('The acting party’s token (delegation)'),
      actor_token_type: str('Required with actor_token'),
      requested_token_type: str('urn:ietf:params:oauth:token-type:access_token (the default)'),
      audience: str('The target service'),
      scope: str('Space-separated scopes'),
      ...resourceField,
      ...clientAuthFields,
    },
  },
};

const oauthError = (description: string, codes: string[], example: string) => ({
  description,
  content: {
    'application/json': {
      schema: { allOf: [ref('OAuthError'), { properties: { error: { enum: codes } } }] },
      example: { error: codes[0], error_description: example },
    },
  },
});
const invalidClient = {
  description: 'Client authentication failed (unknown client, wrong secret, bad assertion); HTTP Basic callers get a Basic challenge',
  headers: { 'WWW-Authenticate': { schema: { type: 'string' } } },
  content: { 'application/json': { schema: ref('OAuthError'), example: { error: 'invalid_client', error_description: 'client authentication failed' } } },
};
const unknownTenant = { $ref: '#/components/responses/UnknownTenant' };
const tooLarge = { $ref: '#/components/responses/PayloadTooLarge' };
const formBody = (schema: Json, example: Record<string, string>) => ({ required: true, content: { [FORM]: { schema, example } } });
const dpopHeader = {
  name: 'DPoP',
  in: 'header',
  required: false,
  description: 'RFC 9449 proof: binds the issued tokens to the key of the proof',
  schema: { type: 'string' },
};
/** HTTP Basic, or (no scheme OpenAPI can express) credentials in the form body, or a public client. */
const tokenEndpointAuth = [{ clientSecretBasic: [] }, {}];

function metadataOperation(operationId: string, summary: string): Json {
  return {
    operationId,
    summary,
    tags: ['discovery'],
    security: [],
    responses: {
      200: { description: 'The metadata document (public, cacheable, any origin)', content: { 'application/json': { schema: ref('ServerMetadata') } } },
      404: unknownTenant,
    },
  };
}

const userinfo = (operationId: string, summary: string): Json => ({
  operationId,
  summary,
  tags: ['userinfo'],
  security: [{ accessToken: [] }, { dpopAccessToken: [] }],
  responses: {
    200: {
      description: 'The claims the access token’s scopes release',
      content: {
        'application/json': { schema: ref('UserInfo'), example: { sub: 'user_01jf8z7b2c3d4e5f6g7h8j9k0m', email: 'ada@acme.test', email_verified: true } },
      },
    },
    401: {
      description: 'No access token, or an invalid, expired or revoked one (RFC 6750 §3)',
      headers: { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'Bearer (or DPoP) challenge with error="invalid_token"' } },
      content: { 'application/json': { schema: ref('OAuthError') } },
    },
    403: oauthError('The token lacks the openid scope', ['insufficient_scope'], 'the token lacks the openid scope'),
  },
});

/** The document for one tenant: `issuer` is its server. */
export function oauthOpenApiDocument(issuer: string): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Keyhall OAuth 2.0 and OpenID Connect endpoints',
      version: '1',
      description:
        'The authorization server of a Keyhall tenant. Bodies are `application/x-www-form-urlencoded` (RFC 6749 §3.2); errors are `{error, error_description}` with the RFC codes. `/.well-known/openid-configuration` lists exactly what the tenant supports. The management API is described at `/v1/openapi.json` and SCIM at `/openapi/scim.json`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: issuer }],
    tags: [
      { name: 'discovery', description: 'Server metadata and signing keys' },
      { name: 'authorization', description: 'The authorization code flow: /authorize and pushed authorization requests' },
      { name: 'token', description: 'Issuing, introspecting and revoking tokens' },
      { name: 'userinfo', description: 'Claims about the signed-in user' },
      { name: 'mcp', description: 'The MCP server for AI agents and how its clients onboard (docs/mcp.md)' },
    ],
    paths: {
      '/.well-known/openid-configuration': { get: metadataOperation('getOpenIdConfiguration', 'OpenID Connect Discovery 1.0 configuration') },
      '/.well-known/oauth-authorization-server': {
        get: metadataOperation('getAuthorizationServerMetadata', 'RFC 8414 authorization server metadata (the same document)'),
      },
      '/.well-known/oauth-protected-resource': {
        get: {
          operationId: 'getProtectedResourceMetadata',
          summary: 'RFC 9728 metadata of the tenant’s own protected resources (/userinfo)',
          tags: ['discovery'],
          security: [],
          responses: {
            200: {
              description: 'The metadata document',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['resource', 'authorization_servers'],
                    properties: { resource: { type: 'string' }, authorization_servers: { type: 'array', items: { type: 'string' } } },
                  },
                },
              },
            },
            404: unknownTenant,
          },
        },
      },
      [JWKS_PATH]: {
        get: {
          operationId: 'getJwks',
          summary: 'The tenant’s public signing keys (current and recently rotated)',
          tags: ['discovery'],
          security: [],
          responses: { 200: { description: 'A JWK Set (RFC 7517)', content: { 'application/jwk-set+json': { schema: ref('JwkSet') } } }, 404: unknownTenant },
        },
      },
      '/authorize': {
        get: {
          operationId: 'authorize',
          summary: 'Start the authorization code flow (a browser navigation, not an API call)',
          description:
            'Signs the user in on the hosted screens, then redirects to `redirect_uri` with `code`, `state` and `iss` (RFC 9207), or with `error`. A missing or unregistered client or redirect URI is shown to the user as a page, never redirected.',
          tags: ['authorization'],
          security: [],
          parameters: Object.entries(authorizationParams).map(([name, schema]) => ({ name, in: 'query', required: ['client_id'].includes(name), schema })),
          responses: {
            302: {
              description: 'To the sign-in screen, or back to the redirect URI with `code` (or `error`), `state` and `iss`',
              headers: { Location: { schema: { type: 'string' } } },
            },
            400: {
              description: 'The client, redirect URI, request_uri or request object (invalid_request_object) is unknown or invalid: an error page for the user',
              content: { 'text/html': { schema: { type: 'string' } } },
            },
          },
        },
        post: {
          operationId: 'authorizeWithForm',
          summary: 'Start the authorization code flow with a form post (OpenID Connect Core §3.1.2.1)',
          tags: ['authorization'],
          security: [],
          requestBody: formBody(
            { type: 'object', required: ['client_id'], properties: authorizationParams },
            {
              response_type: 'code',
              client_id: 'cli_01jf8zc6f7g8h9j0k1m2n3p4q5',
              redirect_uri: 'https://app.acme.test/callback',
              scope: 'openid email',
              code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
              code_challenge_method: 'S256',
              state: 'af0ifjsldkj',
            },
          ),
          responses: {
            302: { description: 'As for GET', headers: { Location: { schema: { type: 'string' } } } },
            400: {
              description: 'The client, redirect URI, request_uri or request object (invalid_request_object) is unknown or invalid: an error page for the user',
              content: { 'text/html': { schema: { type: 'string' } } },
            },
          },
        },
      },
      '/par': {
        post: {
          operationId: 'pushAuthorizationRequest',
          summary: 'Pushed authorization request (RFC 9126)',
          tags: ['authorization'],
          security: tokenEndpointAuth,
          parameters: [dpopHeader],
          requestBody: formBody(
            { type: 'object', properties: { ...authorizationParams, ...clientAuthFields } },
            {
              response_type: 'code',
              client_id: 'cli_01jf8zc6f7g8h9j0k1m2n3p4q5',
              redirect_uri: 'https://app.acme.test/callback',
              scope: 'openid',
              code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
              code_challenge_method: 'S256',
            },
          ),
          responses: {
            201: {
              description: 'The request is stored; pass `request_uri` and `client_id` to /authorize',
              content: {
                'application/json': {
                  schema: ref('PushedAuthorizationResponse'),
                  example: { request_uri: 'urn:ietf:params:oauth:request_uri:6esc_11ACC5bwc014ltc14eY22c', expires_in: 60 },
                },
              },
            },
            400: oauthError(
              'The authorization request is invalid',
              ['invalid_request', 'invalid_scope', 'invalid_target', 'unauthorized_client', 'invalid_dpop_proof'],
              'the body must be application/x-www-form-urlencoded',
            ),
            401: invalidClient,
            413: tooLarge,
          },
        },
      },
      '/device_authorization': {
        post: {
          operationId: 'deviceAuthorization',
          summary: 'Device authorization request (RFC 8628 §3.1)',
          description:
            'A device without a browser (or a command line) asks for a device_code and a user code. The person opens `verification_uri` (or `verification_uri_complete`), enters the code, signs in and approves; meanwhile the device polls /token with `grant_type=urn:ietf:params:oauth:grant-type:device_code`. The client must have that grant in its `grant_types`; it authenticates as at /token (public clients send `client_id`).',
          tags: ['authorization'],
          security: tokenEndpointAuth,
          requestBody: formBody(
            {
              type: 'object',
              properties: { scope: str(`Space-separated scopes; OpenID scopes: ${OIDC_SCOPES.join(', ')}`), ...resourceField, ...clientAuthFields },
            },
            { client_id: 'cli_01jf8zc6f7g8h9j0k1m2n3p4q5', scope: 'openid offline_access' },
          ),
          responses: {
            200: {
              description: 'The codes (never cached: Cache-Control no-store)',
              content: {
                'application/json': {
                  schema: ref('DeviceAuthorizationResponse'),
                  example: {
                    device_code: 'dc_GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS',
                    user_code: 'WDJB-MJHT',
                    verification_uri: `${issuer}/activate`,
                    verification_uri_complete: `${issuer}/activate?user_code=WDJB-MJHT`,
                    expires_in: 600,
                    interval: 5,
                  },
                },
              },
            },
            400: oauthError(
              'The request is invalid, or the client is not registered for the device grant',
              ['invalid_request', 'unauthorized_client', 'invalid_scope', 'invalid_target'],
              'grant_type not registered for this client',
            ),
            401: invalidClient,
            413: tooLarge,
          },
        },
      },
      '/token': {
        post: {
          operationId: 'requestToken',
          summary: 'Issue tokens (authorization code, refresh token, client credentials, token exchange, device code)',
          description:
            'Which members the form takes depends on `grant_type`. Confidential clients authenticate with HTTP Basic (`client_secret_basic`), `client_secret`, or `client_assertion` (`private_key_jwt`); public clients send `client_id` only. A DPoP header binds the tokens to its key.',
          tags: ['token'],
          security: tokenEndpointAuth,
          parameters: [dpopHeader],
          requestBody: {
            required: true,
            content: {
              [FORM]: {
                schema: {
                  oneOf: Object.keys(tokenForms).map(ref),
                  discriminator: {
                    propertyName: 'grant_type',
                    mapping: {
                      [GRANT.code]: '#/components/schemas/AuthorizationCodeGrant',
                      [GRANT.refresh]: '#/components/schemas/RefreshTokenGrant',
                      [GRANT.client]: '#/components/schemas/ClientCredentialsGrant',
                      [GRANT.exchange]: '#/components/schemas/TokenExchangeGrant',
                      [GRANT.device]: '#/components/schemas/DeviceCodeGrant',
                    },
                  },
                },
                examples: {
                  authorization_code: {
                    value: {
                      grant_type: GRANT.code,
                      code: 'SplxlOBeZQQYbYS6WxSbIA',
                      redirect_uri: 'https://app.acme.test/callback',
                      code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
                      client_id: 'cli_01jf8zc6f7g8h9j0k1m2n3p4q5',
                    },
                  },
                  client_credentials: { value: { grant_type: GRANT.client, scope: 'invoices:read', resource: 'https://api.acme.test' } },
                  refresh_token: { value: { grant_type: GRANT.refresh, refresh_token: 'rt_tGzv3JOkF0XG5Qx2TlKWIA' } },
                  device_code: {
                    value: {
                      grant_type: GRANT.device,
                      device_code: 'dc_GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS',
                      client_id: 'cli_01jf8zc6f7g8h9j0k1m2n3p4q5',
                    },
                  },
                },
              },
            },
          },
          responses: {
            200: {
              description: 'The tokens (never cached: Cache-Control no-store)',
              content: {
                'application/json': {
                  schema: ref('TokenResponse'),
                  example: {
                    access_token: 'eyJhbGciOiJFZERTQSIsInR5cCI6ImF0K2p3dCJ9.e30.c2ln',
                    token_type: 'Bearer',
                    expires_in: 600,
                    scope: 'openid email',
                    refresh_token: 'rt_8xLOxBtZp8',
                    id_token: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln',
                  },
                },
              },
            },
            400: oauthError(
              'The grant or request is invalid (a non-form body is invalid_request)',
              [
                'invalid_request',
                'invalid_grant',
                'unsupported_grant_type',
                'unauthorized_client',
                'invalid_scope',
                'invalid_target',
                'invalid_dpop_proof',
                'use_dpop_nonce',
                'authorization_pending',
                'slow_down',
                'access_denied',
                'expired_token',
              ],
              'code: invalid, expired or already used',
            ),
            401: invalidClient,
            413: tooLarge,
          },
        },
      },
      '/introspect': {
        post: {
          operationId: 'introspectToken',
          summary: 'Token introspection (RFC 7662), for confidential clients and resource servers',
          tags: ['token'],
          security: tokenEndpointAuth,
          requestBody: formBody(
            {
              type: 'object',
              required: ['token'],
              properties: { token: str('The token'), token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] }, ...clientAuthFields },
            },
            { token: 'eyJhbGciOiJFZERTQSJ9.e30.c2ln' },
          ),
          responses: {
            200: {
              description: 'Whether the token is active and, if so, its claims',
              content: {
                'application/json': {
                  schema: ref('IntrospectionResponse'),
                  example: {
                    active: true,
                    client_id: 'cli_01jf8zc6f7g8h9j0k1m2n3p4q5',
                    scope: 'invoices:read',
                    token_type: 'Bearer',
                    exp: 1795478400,
                    iat: 1795477800,
                    sub: 'cli_01jf8zc6f7g8h9j0k1m2n3p4q5',
                    aud: 'https://api.acme.test',
                    iss: issuer,
                  },
                },
              },
            },
            400: oauthError('The request is invalid', ['invalid_request'], 'token is required'),
            401: invalidClient,
            413: tooLarge,
          },
        },
      },
      '/revoke': {
        post: {
          operationId: 'revokeToken',
          summary: 'Token revocation (RFC 7009)',
          tags: ['token'],
          security: tokenEndpointAuth,
          requestBody: formBody(
            {
              type: 'object',
              required: ['token'],
              properties: { token: str('The token'), token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] }, ...clientAuthFields },
            },
            { token: 'rt_8xLOxBtZp8', token_type_hint: 'refresh_token' },
          ),
          responses: {
            200: { description: 'Revoked, or the token was unknown (RFC 7009 §2.2: the same answer)' },
            400: oauthError('The request is invalid', ['invalid_request', 'unsupported_token_type'], 'token is required'),
            401: invalidClient,
            413: tooLarge,
          },
        },
      },
      '/userinfo': {
        get: userinfo('getUserInfo', 'The signed-in user’s claims (OpenID Connect Core §5.3)'),
        post: userinfo('postUserInfo', 'The same, with the token in a form body or header'),
      },
      '/.well-known/oauth-protected-resource/mcp': {
        get: {
          operationId: 'getMcpProtectedResourceMetadata',
          summary: 'RFC 9728 metadata of /mcp: its resource identifier, authorization server and scopes',
          tags: ['mcp'],
          security: [],
          responses: {
            200: {
              description: 'The metadata document',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['resource', 'authorization_servers', 'scopes_supported'],
                    properties: {
                      resource: { type: 'string' },
                      authorization_servers: { type: 'array', items: { type: 'string' } },
                      scopes_supported: { type: 'array', items: { type: 'string' } },
                    },
                  },
                },
              },
            },
            404: unknownTenant,
          },
        },
      },
      '/register': {
        post: {
          operationId: 'registerClient',
          summary: 'Dynamic Client Registration (RFC 7591) of a public MCP client, under the tenant’s policy',
          description:
            'Policy `open`, `initial_access_token` (a platform API key holding `clients:register` as Bearer) or `off` (`/v1/mcp/settings`). The response echoes every registered field.',
          tags: ['mcp'],
          security: [{ initialAccessToken: [] }, {}],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['redirect_uris'],
                  properties: {
                    redirect_uris: { type: 'array', items: { type: 'string' } },
                    client_name: { type: 'string' },
                    token_endpoint_auth_method: { type: 'string', enum: ['none'] },
                    grant_types: { type: 'array', items: { type: 'string', enum: ['authorization_code', 'refresh_token'] } },
                    response_types: { type: 'array', items: { type: 'string', enum: ['code'] } },
                    scope: { type: 'string' },
                    backchannel_logout_uri: {
                      type: 'string',
                      description: 'OpenID Connect Back-Channel Logout: where Logout Tokens are POSTed (checked against the egress policy)',
                    },
                    backchannel_logout_session_required: { type: 'boolean' },
                  },
                },
                example: {
                  client_name: 'Agent',
                  redirect_uris: ['http://127.0.0.1:33418/callback'],
                  grant_types: ['authorization_code', 'refresh_token'],
                  token_endpoint_auth_method: 'none',
                  scope: 'mcp:read offline_access',
                },
              },
            },
          },
          responses: {
            201: {
              description: 'Registered',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['client_id', 'redirect_uris'],
                    properties: {
                      client_id: { type: 'string' },
                      client_id_issued_at: { type: 'integer' },
                      redirect_uris: { type: 'array', items: { type: 'string' } },
                      backchannel_logout_uri: { type: 'string' },
                      backchannel_logout_session_required: { type: 'boolean' },
                    },
                  },
                },
              },
            },
            400: oauthError(
              'The metadata is invalid',
              ['invalid_client_metadata', 'invalid_redirect_uri', 'invalid_request'],
              'token_endpoint_auth_method: only public clients (none) may register',
            ),
            401: oauthError(
              'An initial access token is required (policy initial_access_token), or it is unknown',
              ['invalid_token'],
              'an initial access token is required',
            ),
            403: oauthError(
              'Registration is off, or the token may not register',
              ['access_denied', 'insufficient_scope', 'forbidden'],
              'dynamic client registration is turned off for this tenant',
            ),
            429: oauthError('Too many registrations from this address', ['rate_limited'], 'too many requests; retry later'),
          },
        },
      },
      '/mcp': {
        post: {
          operationId: 'mcp',
          summary: 'The MCP server (Streamable HTTP, stateless): one JSON-RPC message per request',
          tags: ['mcp'],
          security: [{ accessToken: [] }, { dpopAccessToken: [] }],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['jsonrpc', 'method'],
                  properties: { jsonrpc: { type: 'string' }, id: { type: ['integer', 'string'] }, method: { type: 'string' }, params: { type: 'object' } },
                },
                example: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
              },
            },
          },
          responses: {
            200: { description: 'The JSON-RPC response', content: { 'application/json': { schema: { type: 'object' } } } },
            202: { description: 'A notification was accepted' },
            401: {
              description: 'No access token for <issuer>/mcp, or an invalid one: the challenge names the metadata and the scopes to ask for',
              headers: { 'WWW-Authenticate': { schema: { type: 'string' } } },
              content: { 'application/json': { schema: ref('OAuthError') } },
            },
            403: oauthError(
              'The token lacks the called tool’s scope (named in the challenge), or a foreign Origin',
              ['insufficient_scope', 'forbidden'],
              'requires scope mcp:connected_accounts',
            ),
          },
        },
      },
    },
    components: {
      securitySchemes: {
        clientSecretBasic: { type: 'http', scheme: 'basic', description: 'client_secret_basic: form-urlencoded client_id and client_secret (RFC 6749 §2.3.1)' },
        accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token issued by /token (RFC 6750)' },
        initialAccessToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'An initial access token for /register: a platform API key holding clients:register',
        },
        dpopAccessToken: {
          type: 'http',
          scheme: 'dpop',
          description: `A DPoP-bound access token with its proof in the DPoP header (RFC 9449; ${DPOP_ALGS.join(', ')})`,
        },
      },
      responses: {
        UnknownTenant: {
          description: 'No tenant is served on the Host of the request',
          content: {
            'application/json': {
              schema: ref('OAuthError'),
              example: { error: 'unknown_tenant', error_description: 'No tenant is served on host "id.other.test"' },
            },
          },
        },
        PayloadTooLarge: {
          description: 'The body is larger than the server accepts',
          content: {
            'application/json': { schema: ref('OAuthError'), example: { error: 'request_too_large', error_description: 'The request body is too large' } },
          },
        },
      },
      schemas: {
        OAuthError: {
          type: 'object',
          description: 'An OAuth error response (RFC 6749 §5.2)',
          required: ['error'],
          properties: { error: { type: 'string' }, error_description: { type: 'string' } },
        },
        ...tokenForms,
        TokenResponse: {
          type: 'object',
          required: ['access_token', 'token_type', 'expires_in'],
          properties: {
            access_token: { type: 'string' },
            token_type: { type: 'string', enum: ['Bearer', 'DPoP', 'N_A'] },
            expires_in: { type: 'integer' },
            scope: { type: 'string' },
            refresh_token: { type: 'string' },
            id_token: { type: 'string' },
            issued_token_type: { type: 'string', description: 'Token exchange only' },
          },
        },
        DeviceAuthorizationResponse: {
          type: 'object',
          description: 'RFC 8628 §3.2',
          required: ['device_code', 'user_code', 'verification_uri', 'expires_in', 'interval'],
          properties: {
            device_code: { type: 'string' },
            user_code: { type: 'string', description: 'Eight consonants shown as XXXX-XXXX; case, spaces and the hyphen do not matter when typed' },
            verification_uri: { type: 'string', format: 'uri' },
            verification_uri_complete: { type: 'string', format: 'uri' },
            expires_in: { type: 'integer', description: 'KEYHALL_DEVICE_CODE_TTL_SECONDS' },
            interval: { type: 'integer', description: 'Seconds between polls of /token; each slow_down adds 5' },
          },
        },
        PushedAuthorizationResponse: {
          type: 'object',
          required: ['request_uri', 'expires_in'],
          properties: { request_uri: { type: 'string' }, expires_in: { type: 'integer' } },
        },
        IntrospectionResponse: {
          type: 'object',
          required: ['active'],
          properties: {
            active: { type: 'boolean' },
            scope: { type: 'string' },
            client_id: { type: 'string' },
            token_type: { type: 'string' },
            exp: { type: 'integer' },
            iat: { type: 'integer' },
            sub: { type: 'string' },
            aud: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
            iss: { type: 'string' },
            cnf: { type: 'object', properties: { jkt: { type: 'string' } } },
          },
        },
        UserInfo: {
          type: 'object',
          required: ['sub'],
          properties: {
            sub: { type: 'string' },
            email: { type: 'string' },
            email_verified: { type: 'boolean' },
            name: { type: 'string' },
            orgs: { type: 'array', items: { type: 'object' } },
          },
        },
        ServerMetadata: {
          type: 'object',
          required: ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'],
          properties: {
            issuer: { type: 'string' },
            authorization_endpoint: { type: 'string' },
            token_endpoint: { type: 'string' },
            jwks_uri: { type: 'string' },
            grant_types_supported: { type: 'array', items: { type: 'string' } },
          },
          additionalProperties: true,
        },
        JwkSet: {
          type: 'object',
          required: ['keys'],
          properties: {
            keys: {
              type: 'array',
              items: {
                type: 'object',
                required: ['kty', 'kid'],
                properties: { kty: { type: 'string' }, kid: { type: 'string' }, alg: { type: 'string' }, use: { type: 'string' } },
              },
            },
          },
        },
      },
    },
  };
}
