/** ServiceProviderConfig, ResourceTypes and Schemas (RFC 7644 §4), built from scimmy's schema definitions. */
import SCIMMY from 'scimmy';
import { scimErrors } from './errors.js';
import { MAX_RESULTS } from './list.js';
import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, LIST_SCHEMA, MAX_MEMBERS_PER_REQUEST, USER_SCHEMA } from './resources.js';

export function serviceProviderConfig(base: string, maxPayloadSize: number) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'SCIM bearer token',
        description: 'A per-connection token (scim_…) minted with POST /v1/organizations/{orgId}/directory/scim_token',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

function resourceTypes(base: string) {
  return [
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A member of the organization',
      schema: USER_SCHEMA,
      schemaExtensions: [{ schema: ENTERPRISE_SCHEMA, required: false }],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: `A group; membership maps to organization roles. At most ${MAX_MEMBERS_PER_REQUEST} member values per request (POST, PUT, or all operations of a PATCH)`,
      schema: GROUP_SCHEMA,
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

function schemas(base: string) {
  const defs = [SCIMMY.Schemas.User.definition, SCIMMY.Schemas.EnterpriseUser.definition, SCIMMY.Schemas.Group.definition];
  return defs.map((d) => {
    const described = d.describe() as Record<string, unknown> & { id: string };
    return { ...described, meta: { resourceType: 'Schema', location: `${base}/Schemas/${described.id}` } };
  });
}

const list = (resources: unknown[]) => ({
  schemas: [LIST_SCHEMA],
  totalResults: resources.length,
  startIndex: 1,
  itemsPerPage: resources.length,
  Resources: resources,
});

export const resourceTypeList = (base: string) => list(resourceTypes(base));
export const schemaList = (base: string) => list(schemas(base));

export function resourceType(base: string, id: string) {
  const found = resourceTypes(base).find((r) => r.id === id);
  if (!found) throw scimErrors.notFound(`ResourceType ${id} not found`);
  return found;
}

export function schema(base: string, id: string) {
  const found = schemas(base).find((s) => s.id === id);
  if (!found) throw scimErrors.notFound(`Schema ${id} not found`);
  return found;
}
