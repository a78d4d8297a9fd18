/**
 * Request and response examples of the main /v1 operations, keyed like OPERATIONS. The linter
 * (`npm run openapi:lint`) checks each against its schema, so they cannot drift silently.
 */
const ORG = 'org_01jf8z6q6wq4r3v0d5m2n7k9xa';
const USER = 'user_01jf8z7b2c3d4e5f6g7h8j9k0m';
const AT = '2026-11-23T09:30:00.000Z';

export interface OperationExamples {
  request?: unknown;
  response: unknown;
}

const organization = {
  id: ORG,
  name: 'Acme Corp',
  slug: 'acme',
  domain: 'acme.test',
  domain_verified: false,
  sso_required: false,
  did: null,
  status: 'active',
  brand_logo_url: null,
  brand_primary_color: null,
  brand_display_name: null,
  webauthn_aaguid_allowlist: null,
  created_at: AT,
  updated_at: AT,
};

const user = {
  id: USER,
  email: 'ada@acme.test',
  name: 'Ada Lovelace',
  email_verified: false,
  has_password: true,
  metadata: { plan: 'pro' },
  private_metadata: {},
  created_at: AT,
  updated_at: AT,
};

const SSO = 'sso_01jf8zb1c2d3e4f5g6h7j8k9m0';
const samlConnection = {
  id: SSO,
  organization_id: ORG,
  protocol: 'saml',
  name: 'Acme Entra ID',
  enabled: true,
  default_role: 'member',
  group_roles: { admins: 'admin' },
  trust_idp_mfa: false,
  saml: {
    idp_entity_id: 'https://sts.acme.test/3f1c2b8e/',
    idp_sso_url: 'https://login.acme.test/3f1c2b8e/saml2',
    idp_certificates: [
      {
        fingerprint_sha256: '5A:1F:0C:93:7B:44:2E:D1:8C:6A:0B:3E:9F:12:74:C8:AD:51:E0:27:96:3B:4C:8D:F2:01:6E:5B:A7:C9:30:DE',
        not_after: '2029-11-23T09:30:00.000Z',
      },
    ],
    metadata_url: 'https://login.acme.test/3f1c2b8e/federationmetadata/2007-06/federationmetadata.xml',
    sp_entity_id: `https://auth.example.com/sso/saml/${SSO}/metadata`,
    acs_url: `https://auth.example.com/sso/saml/${SSO}/acs`,
    sp_metadata_url: `https://auth.example.com/sso/saml/${SSO}/metadata`,
    allow_signed_response: false,
    attributes: {
      email: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
      name: 'http://schemas.microsoft.com/identity/claims/displayname',
      groups: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups',
      email_verified: null,
    },
  },
  created_at: AT,
  updated_at: AT,
};

export const EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  'POST /v1/organizations/{orgId}/sso/connections': {
    request: {
      protocol: 'saml',
      name: 'Acme Entra ID',
      group_roles: { Admins: 'admin' },
      saml: {
        metadata_url: 'https://login.acme.test/3f1c2b8e/federationmetadata/2007-06/federationmetadata.xml',
        attributes: samlConnection.saml.attributes,
      },
    },
    response: samlConnection,
  },
  'POST /v1/organizations': { request: { name: 'Acme Corp', slug: 'acme', domain: 'acme.test' }, response: organization },
  'GET /v1/organizations/{orgId}': { response: organization },
  'PATCH /v1/organizations/{orgId}': {
    request: { brand_primary_color: '#0a66c2', brand_display_name: 'Acme' },
    response: { ...organization, brand_primary_color: '#0a66c2', brand_display_name: 'Acme', updated_at: '2026-11-23T10:00:00.000Z' },
  },
  'POST /v1/users': { request: { email: 'ada@acme.test', name: 'Ada Lovelace', password: 'correct horse battery staple' }, response: user },
  'POST /v1/organizations/{orgId}/members': {
    request: { user_id: USER, role: 'admin' },
    response: { organization_id: ORG, user_id: USER, role: 'admin', roles: ['admin'], created_at: AT, updated_at: AT },
  },
  'POST /v1/organizations/{orgId}/api_keys': {
    request: { name: 'billing sync', scopes: ['members:read', 'members:write'] },
    response: {
      id: 'key_01jf8z9c4d5e6f7g8h9j0k1m2n',
      name: 'billing sync',
      scopes: ['members:read', 'members:write'],
      organization_id: ORG,
      created_at: AT,
      key: 'sk_live_hG2m4P9xQw7Zr1Tn5Vb8Lc3Yd6Fk0Js2Ua4Oe7Ri9Wq',
    },
  },
  'POST /v1/api_keys': {
    request: { name: 'provisioning', scopes: ['organizations:write', 'users:write', 'members:write'] },
    response: {
      id: 'key_01jf8za8d9e0f1g2h3j4k5m6n7',
      name: 'provisioning',
      scopes: ['organizations:write', 'users:write', 'members:write'],
      organization_id: null,
      created_at: AT,
      key: 'sk_live_Qm7Xc2Vb9Nn4Ld1Kf8Hj3Gs6Ap0Zo5Iu2Ye7Tr4Wq9E',
    },
  },
  'POST /v1/organizations/{orgId}/webhooks': {
    request: { url: 'https://hooks.acme.test/keyhall', events: ['member.added', 'member.removed'] },
    response: {
      endpoint_id: 'we_01jf8zb5e6f7g8h9j0k1m2n3p4',
      organization_id: ORG,
      url: 'https://hooks.acme.test/keyhall',
      events: ['member.added', 'member.removed'],
      created_at: AT,
      updated_at: AT,
      secret: 'whsec_Zx8cV2bN4mQ6wE8rT0yU2iO4pA6sD8fG0hJ2kL4zX6c',
    },
  },
  'PUT /v1/mfa_policy': { request: { policy: 'optional' }, response: { policy: 'optional', updated_at: AT } },
  'PUT /v1/branding/texts': {
    request: { de: { 'login.heading': 'Willkommen bei Acme', 'login.heading_client': 'Bei {client} anmelden' } },
    response: { de: { 'login.heading': 'Willkommen bei Acme', 'login.heading_client': 'Bei {client} anmelden' } },
  },
  'PUT /v1/branding/locale': { request: { default_locale: 'de' }, response: { default_locale: 'de', updated_at: AT } },
  'PUT /v1/organizations/{orgId}/mfa_policy': {
    request: { policy: 'required' },
    response: { organization_id: ORG, policy: 'required', effective_policy: 'required', updated_at: AT },
  },
  'GET /v1/organizations/{orgId}/mfa_policy': { response: { organization_id: ORG, policy: null, effective_policy: 'optional', updated_at: null } },
  'GET /v1/users/{userId}/sessions': {
    response: {
      data: [
        {
          id: 'ses_01jf8zc2d3e4f5g6h7j8k9m0n1',
          created_at: AT,
          auth_time: AT,
          last_seen_at: '2026-11-23T10:05:00.000Z',
          idle_expires_at: '2026-11-23T22:05:00.000Z',
          expires_at: '2026-12-23T09:30:00.000Z',
          amr: ['pwd', 'otp', 'mfa'],
          acr: 'mfa',
          mfa_pending: false,
          user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/145.0',
          device: 'Firefox on Linux',
          ip: '203.0.113.7',
          method: 'password',
          idp: null,
        },
      ],
      has_more: false,
      next_cursor: null,
    },
  },
  'GET /v1/organizations/{orgId}/directory/connections/{connectionId}/users': {
    response: {
      data: [
        {
          id: 'dsu_01jf8zd3e4f5g6h7j8k9m0n1p2',
          user_id: USER,
          external_id: '00u1ab2cd3EF4gh5i6j7',
          user_name: 'ada@acme.test',
          display_name: 'Ada Lovelace',
          given_name: 'Ada',
          family_name: 'Lovelace',
          email: 'ada@acme.test',
          emails: [{ value: 'ada@acme.test', type: 'work', primary: true }],
          active: true,
          created_at: AT,
          updated_at: AT,
        },
      ],
      has_more: false,
      next_cursor: null,
    },
  },
  'GET /v1/organizations/{orgId}/directory/connections/{connectionId}/groups': {
    response: {
      data: [
        {
          id: 'dsg_01jf8ze4f5g6h7j8k9m0n1p2q3',
          external_id: '00g9zy8xw7VU6ts5r4q3',
          display_name: 'Engineering',
          member_count: 12,
          created_at: AT,
          updated_at: AT,
        },
      ],
      has_more: false,
      next_cursor: null,
    },
  },
};
