/**
 * The configuration file of `keyhall config export|apply` (docs/config-as-code.md): one zod
 * schema, which validates the file at apply and is published as JSON Schema at
 * `GET /v1/config.schema.json` (generated from it, so the two cannot drift).
 *
 * Every entry is keyed by a stable name that means the same thing in every tenant: an
 * organization's slug, a resource server's identifier, a role's key, a client's name, a social
 * connection's name, a webhook's URL. Secrets are never values in the file, only `${env:NAME}`
 * references that apply reads from its environment.
 */
import { z } from 'zod';
import { clientMetadata } from '../management/clients/schema.js';
import { MFA_POLICIES } from '../storage/repos/mfa.js';
import { ID_TOKEN_CLAIMS_POLICIES } from '../oauth/token/lifetimes.js';
import { ACCESS_TOKEN_ALGS } from '../oauth/tokens/jws.js';
import { SCOPE_TOKEN } from '../oauth/scope.js';
import { isResourceIndicator } from '../oauth/token/targets.js';
import { SOCIAL_PRESET_NAMES } from '../social/presets.js';
import { LOCALES } from '../screens/i18n/index.js';
import { CLIENT_REGISTRATION_POLICIES } from '../storage/repos/mcp-settings.js';

export const CONFIG_VERSION = 1;

/** `${env:NAME}`: the secret is the value of the environment variable NAME when apply runs. */
export const ENV_REF = /^\$\{env:([A-Za-z_][A-Za-z0-9_]{0,127})\}$/;
const envRef = z
  .string()
  .regex(ENV_REF, 'must be a reference ${env:NAME} (secrets are never written into the file)')
  .describe('A secret, as ${env:NAME}: apply reads it from the environment variable NAME');

const slug = z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, 'must be lower-case letters, digits and dashes');
const domain = z
  .string()
  .max(253)
  .regex(/^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a domain name in lower case');
const httpsUrl = z
  .string()
  .max(2048)
  .regex(/^https:\/\/\S+$/, 'must be an https URL');
const scopeToken = z.string().regex(SCOPE_TOKEN, 'must be a scope token');
const identifier = z.string().max(2000).refine(isResourceIndicator, 'must be an absolute URI without a fragment');
const roleKey = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be a role key (a-z 0-9 _ -)');
const aaguid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be a lower-case UUID');
const address = z.string().max(254).email();

const resourceServer = z.strictObject({
  identifier: identifier.describe('The key: the audience URI'),
  name: z.string().min(1).max(200),
  access_token_signing_alg: z.enum(ACCESS_TOKEN_ALGS).optional(),
  access_token_ttl_seconds: z
    .number()
    .int()
    .min(30)
    .max(24 * 3600)
    .nullable()
    .optional(),
  permissions: z
    .array(z.strictObject({ name: scopeToken, description: z.string().max(500).nullable().optional() }))
    .max(100)
    .optional(),
  dpop_required: z.boolean().optional(),
});

const role = z.strictObject({
  key: roleKey.describe('The key'),
  name: z.string().min(1).max(200),
  description: z.string().max(500).nullable().optional(),
  permissions: z
    .array(z.strictObject({ resource_server: identifier.describe("A resource server's identifier"), permission: scopeToken }))
    .max(500)
    .optional(),
});

const client = clientMetadata.extend({ client_name: z.string().min(1).max(200).describe('The key: unique among the clients of the file and of the tenant') });

const webhook = z.strictObject({
  url: z.string().min(1).max(2048).describe('The key within its organization'),
  events: z.array(z.string().min(1).max(100)).min(1).max(100).optional(),
});

const organization = z.strictObject({
  slug: slug.describe('The key'),
  name: z.string().trim().min(1).max(200),
  domain: domain.nullable().optional(),
  brand_logo_url: httpsUrl.nullable().optional(),
  brand_primary_color: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, 'must be #rrggbb')
    .nullable()
    .optional(),
  brand_display_name: z.string().trim().min(1).max(100).nullable().optional(),
  sso_required: z.boolean().optional(),
  mfa_policy: z.enum(MFA_POLICIES).nullable().optional().describe("The organization's own MFA policy; null: the tenant's"),
  webauthn_aaguid_allowlist: z.array(aaguid).max(100).nullable().optional(),
  webhooks: z.array(webhook).max(20).optional(),
});

const url = z.string().min(1).max(2048);
const fieldPath = z.string().min(1).max(200);
const socialConnection = z.strictObject({
  name: z.string().trim().min(1).max(100).describe('The key'),
  preset: z.enum(SOCIAL_PRESET_NAMES as [string, ...string[]]).optional(),
  oidc: z.strictObject({ issuer: url }).optional(),
  oauth2: z
    .strictObject({
      authorization_endpoint: url,
      token_endpoint: url,
      userinfo_endpoint: url,
      emails_endpoint: url.nullable().optional(),
      token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post']).optional(),
      pkce: z.boolean().optional(),
      fields: z.strictObject({
        subject: fieldPath,
        email: fieldPath.optional(),
        email_verified: fieldPath.optional(),
        name: fieldPath.optional(),
        picture: fieldPath.optional(),
      }),
    })
    .optional(),
  client_id: z.string().min(1).max(255),
  client_secret: envRef.nullable().optional(),
  scopes: z.array(scopeToken).max(20).optional(),
  sign_in: z.boolean().optional(),
  sign_up: z.boolean().optional(),
  display_order: z.number().int().min(0).max(1000).optional(),
});

const settings = z.strictObject({
  mfa_policy: z.enum(MFA_POLICIES).optional(),
  default_role: roleKey.optional().describe('A tenant-wide role: what new members get'),
  account_linking: z.enum(['verified_email', 'manual']).optional(),
  tokens: z
    .strictObject({
      access_token_ttl_seconds: z.number().int().min(30).max(86_400).nullable(),
      refresh_token_ttl_seconds: z.number().int().min(60).max(31_536_000).nullable(),
      id_token_claims: z.enum(ID_TOKEN_CLAIMS_POLICIES).nullable().optional(),
    })
    .optional(),
  email_sender: z
    .strictObject({
      from_address: address.nullable(),
      from_name: z
        .string()
        .trim()
        .min(1)
        .max(100)
        .regex(/^[^\r\n<>"\\]+$/, 'must not contain line breaks, <, >, " or \\')
        .nullable(),
      reply_to: address.nullable(),
    })
    .optional(),
  mcp: z
    .strictObject({ client_registration: z.enum(CLIENT_REGISTRATION_POLICIES).optional(), client_id_metadata_documents: z.boolean().optional() })
    .optional(),
});

const branding = z.strictObject({
  default_locale: z.enum(LOCALES).optional(),
  texts: z
    .partialRecord(z.enum(LOCALES), z.record(z.string().max(200), z.string().max(2000)))
    .optional()
    .describe('{locale: {message key: text}}: the whole set of the tenant’s texts (docs/branding.md)'),
});

/** Sections left out of the file are left alone (even with --prune); an empty list is "none". */
export const configFile = z.strictObject({
  version: z.literal(CONFIG_VERSION),
  settings: settings.optional(),
  branding: branding.optional(),
  resource_servers: z.array(resourceServer).max(1000).optional(),
  roles: z.array(role).max(1000).optional(),
  clients: z.array(client).max(1000).optional(),
  organizations: z.array(organization).max(10_000).optional(),
  social_connections: z.array(socialConnection).max(20).optional(),
});

export type ConfigFile = z.infer<typeof configFile>;
export type OrganizationEntry = z.infer<typeof organization>;
export type ClientEntry = z.infer<typeof client>;
export type SocialEntry = z.infer<typeof socialConnection>;
export type ResourceServerEntry = z.infer<typeof resourceServer>;
export type RoleEntry = z.infer<typeof role>;

let cached: Record<string, unknown> | undefined;

/** The file's JSON Schema (draft 2020-12), generated from the zod schema. */
export function configJsonSchema(): Record<string, unknown> {
  cached ??= {
    $id: 'https://keyhall.dev/config.schema.json',
    title: 'Keyhall configuration (keyhall config apply)',
    ...(z.toJSONSchema(configFile, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>),
  };
  return cached;
}

/** Per-path messages of a file that does not match the schema (`clients.0.redirect_uris.1: …`). */
export function validateConfig(doc: unknown): { ok: true; file: ConfigFile } | { ok: false; errors: string[] } {
  const parsed = configFile.safeParse(doc);
  if (parsed.success) {
    const dupes = duplicateKeys(parsed.data);
    return dupes.length ? { ok: false, errors: dupes } : { ok: true, file: parsed.data };
  }
  return { ok: false, errors: parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(file)'}: ${i.message}`) };
}

/** A key named twice in one section is ambiguous: an error at the second. */
function duplicateKeys(f: ConfigFile): string[] {
  const out: string[] = [];
  const check = <T>(section: string, list: T[] | undefined, key: (t: T) => string) => {
    const seen = new Set<string>();
    list?.forEach((item, i) => {
      const k = key(item);
      if (seen.has(k)) out.push(`${section}.${i}: ${JSON.stringify(k)} is named twice`);
      seen.add(k);
    });
  };
  check('resource_servers', f.resource_servers, (r) => r.identifier);
  check('roles', f.roles, (r) => r.key);
  check('clients', f.clients, (c) => c.client_name);
  check('organizations', f.organizations, (o) => o.slug);
  check('social_connections', f.social_connections, (s) => s.name);
  f.organizations?.forEach((o, i) => check(`organizations.${i}.webhooks`, o.webhooks, (w) => w.url));
  return out;
}
