/**
 * The OpenAPI 3.1 description of the SCIM 2.0 server under /scim/v2, served at
 * /openapi/scim.json (docs/api.md, docs/scim.md). Resources follow RFC 7643; the schemas here
 * name the attributes Keyhall maps, and `/scim/v2/Schemas` stays the normative list. /Bulk is
 * left out: it is not supported (ServiceProviderConfig says so, and it answers 501).
 */
type Json = Record<string, unknown>;
const SCIM = 'application/scim+json';
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const err = (name: string) => ({ $ref: `#/components/responses/${name}` });
const scimBody = (schema: Json, example?: unknown) => ({
  required: true,
  content: { [SCIM]: { schema, ...(example ? { example } : {}) }, 'application/json': { schema } },
});
const ok = (description: string, schema: Json, headers?: Json) => ({ description, ...(headers ? { headers } : {}), content: { [SCIM]: { schema } } });
const etag = { ETag: { description: 'The resource version (weak ETag); send it back in If-Match', schema: { type: 'string' } } };
const ifMatch = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'Apply only if the resource still has this ETag (`*`: any); otherwise 412',
  schema: { type: 'string' },
};
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const shared = { 401: err('Unauthorized'), 429: err('TooManyRequests') };
const withBody = { 400: err('BadRequest'), 413: err('PayloadTooLarge'), 415: err('UnsupportedMediaType') };
const listParams = [
  { name: 'filter', in: 'query', required: false, description: 'RFC 7644 §3.4.2.2 filter, e.g. `userName eq "ada@acme.test"`', schema: { type: 'string' } },
  { name: 'startIndex', in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1 } },
  { name: 'count', in: 'query', required: false, schema: { type: 'integer', minimum: 0 } },
  { name: 'attributes', in: 'query', required: false, schema: { type: 'string' } },
  { name: 'excludedAttributes', in: 'query', required: false, schema: { type: 'string' } },
];

const USER_EXAMPLE = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName: 'ada@acme.test',
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ value: 'ada@acme.test', primary: true }],
  active: true,
  externalId: '00u1abcd',
};

/** The CRUD operations of one resource type (Users or Groups). */
function resource(plural: 'Users' | 'Groups', singular: 'User' | 'Group', tag: string, example: unknown): Record<string, Json> {
  const schema = ref(singular);
  const list = ok(`A page of ${plural.toLowerCase()} (ListResponse)`, ref('ListResponse'));
  return {
    [`/${plural}`]: {
      get: {
        operationId: `list${plural}`,
        summary: `List or filter ${plural.toLowerCase()}`,
        tags: [tag],
        parameters: listParams,
        responses: { 200: list, 400: err('BadRequest'), ...shared },
      },
      post: {
        operationId: `create${singular}`,
        summary: `Create a ${singular.toLowerCase()}`,
        tags: [tag],
        requestBody: scimBody(schema, example),
        responses: { 201: ok(`The ${singular.toLowerCase()} created`, schema, etag), ...withBody, 409: err('Conflict'), ...shared },
      },
    },
    [`/${plural}/.search`]: {
      post: {
        operationId: `search${plural}`,
        summary: `Search ${plural.toLowerCase()} with a SearchRequest body (RFC 7644 §3.4.3)`,
        tags: [tag],
        requestBody: scimBody(ref('SearchRequest')),
        responses: { 200: list, ...withBody, ...shared },
      },
    },
    [`/${plural}/{id}`]: {
      get: {
        operationId: `get${singular}`,
        summary: `Get a ${singular.toLowerCase()}`,
        tags: [tag],
        parameters: [idParam],
        responses: { 200: ok(`The ${singular.toLowerCase()}`, schema, etag), 404: err('NotFound'), ...shared },
      },
      put: {
        operationId: `replace${singular}`,
        summary: `Replace a ${singular.toLowerCase()}`,
        tags: [tag],
        parameters: [idParam, ifMatch],
        requestBody: scimBody(schema),
        responses: {
          200: ok(`The ${singular.toLowerCase()} as replaced`, schema, etag),
          ...withBody,
          404: err('NotFound'),
          409: err('Conflict'),
          412: err('PreconditionFailed'),
          ...shared,
        },
      },
      patch: {
        operationId: `patch${singular}`,
        summary: `Modify a ${singular.toLowerCase()} with PATCH operations (RFC 7644 §3.5.2)`,
        tags: [tag],
        parameters: [idParam, ifMatch],
        requestBody: scimBody(ref('PatchOp')),
        responses: {
          200: ok(`The ${singular.toLowerCase()} as modified`, schema, etag),
          204: { description: 'Modified (when the client asked for no body)' },
          ...withBody,
          404: err('NotFound'),
          409: err('Conflict'),
          412: err('PreconditionFailed'),
          ...shared,
        },
      },
      delete: {
        operationId: `delete${singular}`,
        summary: `Delete a ${singular.toLowerCase()}`,
        tags: [tag],
        parameters: [idParam, ifMatch],
        responses: { 204: { description: 'Deleted' }, 404: err('NotFound'), 412: err('PreconditionFailed'), ...shared },
      },
    },
  };
}

const scimError = (description: string, status: number, scimType?: string, headers?: Json) => ({
  description,
  ...(headers ? { headers } : {}),
  content: {
    [SCIM]: {
      schema: ref('Error'),
      example: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status), ...(scimType ? { scimType } : {}), detail: description },
    },
  },
});

const discovery = (operationId: string, summary: string, withId = false): Json => ({
  operationId,
  summary,
  tags: ['discovery'],
  ...(withId ? { parameters: [idParam] } : {}),
  responses: { 200: ok('The document', { type: 'object' }), ...(withId ? { 404: err('NotFound') } : {}), ...shared },
});

/** The document for one tenant: `issuer` is its host, the SCIM base is `<issuer>/scim/v2`. */
export function scimOpenApiDocument(issuer: string): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Keyhall SCIM 2.0 directory sync',
      version: '2',
      description:
        'RFC 7644 provisioning of one organization’s members, authorized by the SCIM token of a directory connection (minted with `POST /v1/organizations/{orgId}/directory/scim_token`). Bodies and answers are `application/scim+json`; errors are SCIM errors (RFC 7644 §3.12).',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: `${issuer.replace(/\/$/, '')}/scim/v2` }],
    security: [{ scimToken: [] }],
    tags: [
      { name: 'users', description: 'Users of the organization (members)' },
      { name: 'groups', description: 'Groups, mapped to member roles by the connection' },
      { name: 'discovery', description: 'What the server supports (RFC 7644 §4)' },
    ],
    paths: {
      ...resource('Users', 'User', 'users', USER_EXAMPLE),
      ...resource('Groups', 'Group', 'groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Engineering', members: [] }),
      '/ServiceProviderConfig': { get: discovery('getServiceProviderConfig', 'The features this server supports') },
      '/ResourceTypes': { get: discovery('listResourceTypes', 'The resource types (User, Group)') },
      '/ResourceTypes/{id}': { get: discovery('getResourceType', 'One resource type', true) },
      '/Schemas': { get: discovery('listSchemas', 'The schemas and their attributes') },
      '/Schemas/{id}': { get: discovery('getSchema', 'One schema', true) },
    },
    components: {
      securitySchemes: {
        scimToken: { type: 'http', scheme: 'bearer', description: 'The SCIM token of a directory connection (shown once when minted over /v1)' },
      },
      responses: {
        BadRequest: scimError('Invalid syntax, filter, path or value (scimType says which)', 400, 'invalidValue'),
        Unauthorized: scimError('No SCIM token, or an unknown or replaced one', 401, undefined, { 'WWW-Authenticate': { schema: { type: 'string' } } }),
        NotFound: scimError('No such resource in this connection’s organization', 404),
        Conflict: scimError(
          'A unique attribute (userName, displayName) is taken, or the email belongs to an existing user this directory may not link',
          409,
          'uniqueness',
        ),
        PreconditionFailed: scimError('If-Match does not match the resource’s current ETag', 412),
        PayloadTooLarge: scimError('The body is larger than ServiceProviderConfig allows', 413),
        UnsupportedMediaType: scimError('The body is not application/scim+json or application/json', 415),
        TooManyRequests: scimError('The connection’s per-minute request limit is used up', 429, undefined, { 'Retry-After': { schema: { type: 'integer' } } }),
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['schemas', 'status'],
          properties: {
            schemas: { type: 'array', items: { type: 'string' } },
            status: { type: 'string' },
            scimType: { type: 'string' },
            detail: { type: 'string' },
          },
        },
        Meta: {
          type: 'object',
          properties: {
            resourceType: { type: 'string' },
            created: { type: 'string' },
            lastModified: { type: 'string' },
            location: { type: 'string' },
            version: { type: 'string' },
          },
        },
        User: {
          type: 'object',
          required: ['schemas', 'userName'],
          properties: {
            schemas: { type: 'array', items: { type: 'string' } },
            id: { type: 'string', readOnly: true },
            externalId: { type: 'string' },
            userName: { type: 'string', description: 'The email address' },
            name: { type: 'object', properties: { givenName: { type: 'string' }, familyName: { type: 'string' }, formatted: { type: 'string' } } },
            displayName: { type: 'string' },
            emails: {
              type: 'array',
              items: { type: 'object', properties: { value: { type: 'string' }, primary: { type: 'boolean' }, type: { type: 'string' } } },
            },
            active: { type: 'boolean' },
            groups: { type: 'array', readOnly: true, items: { type: 'object', properties: { value: { type: 'string' }, display: { type: 'string' } } } },
            meta: { ...ref('Meta'), readOnly: true },
          },
        },
        Group: {
          type: 'object',
          required: ['schemas', 'displayName'],
          properties: {
            schemas: { type: 'array', items: { type: 'string' } },
            id: { type: 'string', readOnly: true },
            externalId: { type: 'string' },
            displayName: { type: 'string' },
            members: { type: 'array', items: { type: 'object', required: ['value'], properties: { value: { type: 'string' }, display: { type: 'string' } } } },
            meta: { ...ref('Meta'), readOnly: true },
          },
        },
        ListResponse: {
          type: 'object',
          required: ['schemas', 'totalResults', 'Resources'],
          properties: {
            schemas: { type: 'array', items: { type: 'string' } },
            totalResults: { type: 'integer' },
            startIndex: { type: 'integer' },
            itemsPerPage: { type: 'integer' },
            Resources: { type: 'array', items: { type: 'object' } },
          },
        },
        SearchRequest: {
          type: 'object',
          required: ['schemas'],
          properties: {
            schemas: { type: 'array', items: { type: 'string' } },
            filter: { type: 'string' },
            startIndex: { type: 'integer' },
            count: { type: 'integer' },
            attributes: { type: 'array', items: { type: 'string' } },
            excludedAttributes: { type: 'array', items: { type: 'string' } },
          },
        },
        PatchOp: {
          type: 'object',
          required: ['schemas', 'Operations'],
          properties: {
            schemas: { type: 'array', items: { type: 'string', const: 'urn:ietf:params:scim:api:messages:2.0:PatchOp' } },
            Operations: {
              type: 'array',
              items: {
                type: 'object',
                required: ['op'],
                properties: { op: { type: 'string', description: 'add, replace or remove (any case)' }, path: { type: 'string' }, value: {} },
              },
            },
          },
        },
      },
    },
  };
}
