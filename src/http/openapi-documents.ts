/** The OpenAPI documents Keyhall serves on every tenant's host (docs/api.md). */
export const OPENAPI_DOCUMENTS = [
  { name: 'keyhall-v1', path: '/v1/openapi.json' },
  { name: 'oauth', path: '/openapi/oauth.json' },
  { name: 'scim', path: '/openapi/scim.json' },
] as const;
