/**
 * `keyhall config export` and `keyhall config apply` (docs/config-as-code.md): a tenant's
 * configuration read into the file's shape, and a file turned into a plan — the changes that make
 * the tenant match it, each made through the same management service /v1 uses, so every change is
 * checked and audited exactly as an API call would be.
 *
 * A plan is computed whole before anything is written: schema errors, unknown references and
 * unset `${env:…}` secrets stop it with nothing applied. Only the fields an entry names are
 * compared and changed; a section left out of the file is left alone.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Context } from '../context.js';
import type { Actor } from '../events/catalogue.js';
import { type ClientView } from '../management/clients/schema.js';
import { clientMetadata } from '../management/clients/schema.js';
import type { SocialConnectionRecord } from '../storage/repos/social.js';
import type { TenantRecord } from '../storage/repos/tenants.js';
import type { MfaPolicy } from '../storage/repos/mfa.js';
import type { Locale } from '../screens/i18n/index.js';
import { checkOverrides } from '../management/branding/service.js';
import { isAppError } from '../kernel/errors.js';
import { type ClientEntry, CONFIG_VERSION, type ConfigFile, ENV_REF, type OrganizationEntry, type SocialEntry } from './schema.js';

/** What the CLI changes is recorded as the operator's, named `cli` (docs/config-as-code.md). */
export const CLI_ACTOR: Actor = { type: 'system', id: 'cli' };

const PAGE = 100;

/** Every row of a keyset-paged list. */
async function all<T>(page: (after: string | undefined) => Promise<T[]>, keyOf: (t: T) => string): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (;;) {
    const rows = await page(after);
    out.push(...rows);
    if (rows.length < PAGE) return out;
    after = keyOf(rows[rows.length - 1]!);
  }
}

/** `GITHUB` from `GitHub`: the environment variable a connection's secret is referenced by. */
const envName = (name: string) =>
  `KEYHALL_SOCIAL_${
    name
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, '_')
      .replace(/^_|_$/g, '') || 'CONNECTION'
  }_CLIENT_SECRET`;

const CLIENT_FIELDS = Object.keys(clientMetadata.shape).filter((k) => k !== 'client_name') as (keyof ClientView & keyof ClientEntry)[];

function clientEntry(c: ClientView): ClientEntry {
  const out: Record<string, unknown> = { client_name: c.client_name };
  for (const k of CLIENT_FIELDS) out[k] = c[k];
  return out as ClientEntry;
}

const href = (u: string) => {
  try {
    return new URL(u).href;
  } catch {
    return u;
  }
};

function socialProvider(c: SocialConnectionRecord): Pick<SocialEntry, 'preset' | 'oidc' | 'oauth2'> {
  if (c.preset !== null) return { preset: c.preset };
  const k = c.config;
  if (c.kind === 'oidc') return { oidc: { issuer: k.issuer ?? '' } };
  const fields = {
    subject: k.profile.subject,
    ...(k.profile.email !== undefined ? { email: k.profile.email } : {}),
    ...(k.profile.emailVerified !== undefined ? { email_verified: k.profile.emailVerified } : {}),
    ...(k.profile.name !== undefined ? { name: k.profile.name } : {}),
    ...(k.profile.picture !== undefined ? { picture: k.profile.picture } : {}),
  };
  return {
    oauth2: {
      authorization_endpoint: k.authorizationEndpoint,
      token_endpoint: k.tokenEndpoint,
      userinfo_endpoint: k.userinfoEndpoint ?? '',
      emails_endpoint: k.emailsEndpoint,
      token_endpoint_auth_method: k.tokenAuthMethod === 'client_secret_post' ? 'client_secret_post' : 'client_secret_basic',
      pkce: k.pkce,
      fields,
    },
  };
}

/** The provider half of an entry, its URLs normalized, to compare a file's with the stored one. */
function providerKey(p: Pick<SocialEntry, 'preset' | 'oidc' | 'oauth2'>): unknown {
  if (p.preset !== undefined) return { preset: p.preset };
  if (p.oidc !== undefined) return { oidc: href(p.oidc.issuer).replace(/\/$/, '') };
  const o = p.oauth2!;
  return {
    oauth2: {
      a: href(o.authorization_endpoint),
      t: href(o.token_endpoint),
      u: href(o.userinfo_endpoint),
      e: o.emails_endpoint ? href(o.emails_endpoint) : null,
      m: o.token_endpoint_auth_method ?? 'client_secret_basic',
      pkce: o.pkce ?? true,
      f: o.fields,
    },
  };
}

/** The tenant's configuration as the file writes it (secrets as `${env:…}` references); `notes` names what was left out. */
export async function exportConfig(ctx: Context, tenant: TenantRecord): Promise<{ file: ConfigFile; notes: string[] }> {
  const m = ctx.management;
  const t = tenant.id;
  const notes: string[] = [];

  const servers = await all(
    (after) => m.resourceServers.list(t, { after, limit: PAGE }),
    (r) => r.id,
  );
  const identifierOf = new Map(servers.map((s) => [s.id, s.identifier]));
  const roles = await all(
    (after) => m.roles.list(t, null, after, PAGE),
    (r) => r.key,
  );
  const clients = await all(
    (after) => m.clients.list(t, { after, limit: PAGE }),
    (c) => c.client_id,
  );
  const orgs = await all(
    (after) => m.organizations.list(t, after, PAGE),
    (o) => o.id,
  );
  const social = await m.social.list(t);
  const tokens = await m.tokenSettings.get(t);
  const email = await m.email.settings(tenant);
  const mcp = await m.mcp.settings(t);

  const namedClients = new Map<string, ClientView>();
  for (const c of clients) {
    if (c.client_name === null) notes.push(`client ${c.client_id} has no client_name: not exported (give it one to manage it here)`);
    else if (namedClients.has(c.client_name)) notes.push(`client ${c.client_id}: another client is named ${JSON.stringify(c.client_name)}: not exported`);
    else namedClients.set(c.client_name, c);
  }

  const organizations: OrganizationEntry[] = [];
  for (const o of orgs) {
    if (o.slug === null) {
      notes.push(`organization ${o.id} (${o.name}) has no slug: not exported (give it one to manage it here)`);
      continue;
    }
    const own = await m.mfaPolicy.getOrganization(t, o.id);
    const hooks = await m.webhooks.list(t, o.id, undefined, PAGE);
    organizations.push({
      slug: o.slug,
      name: o.name,
      domain: o.domain,
      brand_logo_url: o.brandLogoUrl,
      brand_primary_color: o.brandPrimaryColor,
      brand_display_name: o.brandDisplayName,
      sso_required: o.ssoRequired,
      mfa_policy: own.policy,
      webauthn_aaguid_allowlist: o.webauthnAaguidAllowlist,
      webhooks: hooks.map((h) => ({ url: h.url, events: h.events })),
    });
  }

  const file: ConfigFile = {
    version: CONFIG_VERSION,
    settings: {
      mfa_policy: (await m.mfaPolicy.getTenant(t)).policy,
      default_role: await m.roles.defaultRole(t),
      account_linking: (await m.social.settings(t)).account_linking,
      tokens: {
        access_token_ttl_seconds: tokens.access_token_ttl_seconds,
        refresh_token_ttl_seconds: tokens.refresh_token_ttl_seconds,
        id_token_claims: tokens.id_token_claims,
      },
      email_sender: { from_address: email.from_address, from_name: email.from_name, reply_to: email.reply_to },
      mcp: { client_registration: mcp.client_registration, client_id_metadata_documents: mcp.client_id_metadata_documents },
    },
    branding: {
      default_locale: (await m.branding.getLocale(t)).default_locale,
      texts: (await m.branding.getTexts(t)) as NonNullable<ConfigFile['branding']>['texts'],
    },
    resource_servers: servers
      .map((s) => ({
        identifier: s.identifier,
        name: s.name,
        access_token_signing_alg: s.signingAlg,
        access_token_ttl_seconds: s.accessTokenTtlSeconds,
        permissions: s.scopes.map((name) => ({ name, description: s.permissionDescriptions[name] ?? null })),
        dpop_required: s.dpopRequired,
      }))
      .sort((a, b) => a.identifier.localeCompare(b.identifier)),
    roles: roles.map((r) => ({
      key: r.key,
      name: r.name,
      description: r.description,
      permissions: r.permissions.map((p) => ({ resource_server: identifierOf.get(p.resource_server_id) ?? p.resource_server_id, permission: p.permission })),
    })),
    clients: [...namedClients.values()].map(clientEntry).sort((a, b) => a.client_name.localeCompare(b.client_name)),
    organizations: organizations.sort((a, b) => a.slug.localeCompare(b.slug)),
    social_connections: social
      .map((c) => ({
        name: c.name,
        ...socialProvider(c),
        client_id: c.clientId,
        client_secret: c.secretEnc === null ? null : `\${env:${envName(c.name)}}`,
        scopes: c.scopes,
        sign_in: c.signIn,
        sign_up: c.signUp,
        display_order: c.displayOrder,
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
  return { file, notes };
}

/** One change of a plan: `+` create, `~` update (the fields), `-` remove. */
export interface Change {
  op: '+' | '~' | '-';
  what: string;
  fields?: string[];
  /** Makes the change; a line to show after (a new client's secret, shown once). */
  run: () => Promise<string | void>;
}

export interface Plan {
  changes: Change[];
  /** What the tenant has that the file's sections do not name, kept without --prune. */
  unmanaged: string[];
}

/** A file that names something that does not exist, or a secret whose variable is unset: nothing is applied. */
export class PlanError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
  }
}

/** The fields of `desired` (those it names) whose values differ from `current`'s. */
function changedFields(desired: Record<string, unknown>, current: Record<string, unknown> | undefined, skip: string[] = []): string[] {
  return Object.keys(desired).filter((k) => !skip.includes(k) && desired[k] !== undefined && !isDeepStrictEqual(desired[k], current?.[k]));
}

const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));

/**
 * The changes that make the tenant match `file`. `env` resolves `${env:NAME}`; with `prune`,
 * what a section of the file no longer names is removed.
 */
export async function planConfig(
  ctx: Context,
  tenant: TenantRecord,
  file: ConfigFile,
  opts: { prune: boolean; env: NodeJS.ProcessEnv; actor?: Actor },
): Promise<Plan> {
  const m = ctx.management;
  const t = tenant.id;
  const actor = opts.actor ?? CLI_ACTOR;
  const { file: current } = await exportConfig(ctx, tenant);
  const problems: string[] = [];
  const changes: Change[] = [];
  const removals: Change[] = [];
  const unmanaged: string[] = [];
  const q = JSON.stringify;

  const secret = (ref: string, where: string): string | undefined => {
    const name = ENV_REF.exec(ref)![1]!;
    const v = opts.env[name];
    if (v === undefined || v === '') problems.push(`${where}: the environment variable ${name} is not set`);
    return v;
  };

  // Ids are resolved when a change runs: a resource server created earlier in the plan has one by then.
  const serverIds = async () =>
    new Map(
      (
        await all(
          (after) => m.resourceServers.list(t, { after, limit: PAGE }),
          (r) => r.id,
        )
      ).map((s) => [s.identifier, s.id]),
    );
  const orgIds = async () =>
    new Map(
      (
        await all(
          (after) => m.organizations.list(t, after, PAGE),
          (o) => o.id,
        )
      ).flatMap((o) => (o.slug === null ? [] : [[o.slug, o.id] as const])),
    );
  const currentOrgIds = await orgIds();

  // ---- resource servers
  const declared = new Map((current.resource_servers ?? []).map((s) => [s.identifier, new Set((s.permissions ?? []).map((p) => p.name))]));
  if (file.resource_servers) {
    const have = new Map((current.resource_servers ?? []).map((s) => [s.identifier, s]));
    for (const s of file.resource_servers) {
      declared.set(s.identifier, new Set((s.permissions ?? []).map((p) => p.name)));
      const before = have.get(s.identifier);
      const input = { ...s, permissions: s.permissions?.map((p) => ({ name: p.name, description: p.description ?? null })) };
      if (!before) {
        changes.push({
          op: '+',
          what: `resource_servers ${q(s.identifier)}`,
          run: async () => void (await m.resourceServers.create(t, tenant.issuer, actor, input)),
        });
        continue;
      }
      const fields = changedFields(input, before);
      if (fields.length)
        changes.push({
          op: '~',
          what: `resource_servers ${q(s.identifier)}`,
          fields,
          run: async () => void (await m.resourceServers.update(t, tenant.issuer, actor, (await serverIds()).get(s.identifier)!, pick(input, fields))),
        });
    }
    const named = new Set(file.resource_servers.map((s) => s.identifier));
    for (const s of current.resource_servers ?? [])
      if (!named.has(s.identifier)) {
        if (!opts.prune) unmanaged.push(`resource_servers ${q(s.identifier)}`);
        else
          removals.push({
            op: '-',
            what: `resource_servers ${q(s.identifier)}`,
            run: async () => m.resourceServers.delete(t, actor, (await serverIds()).get(s.identifier)!),
          });
      }
  }

  // ---- roles (tenant-wide)
  const roleKeys = new Set((current.roles ?? []).map((r) => r.key));
  if (file.roles) {
    const have = new Map((current.roles ?? []).map((r) => [r.key, r]));
    file.roles.forEach((r, i) => {
      roleKeys.add(r.key);
      for (const [j, p] of (r.permissions ?? []).entries()) {
        const perms = declared.get(p.resource_server);
        if (!perms) problems.push(`roles.${i}.permissions.${j}: no resource server ${q(p.resource_server)} in the file or the tenant`);
        else if (!perms.has(p.permission)) problems.push(`roles.${i}.permissions.${j}: ${p.resource_server} declares no permission ${q(p.permission)}`);
      }
      const resolve = async () => {
        const ids = await serverIds();
        return r.permissions?.map((p) => ({ resource_server_id: ids.get(p.resource_server)!, permission: p.permission }));
      };
      const before = have.get(r.key);
      if (!before) {
        changes.push({
          op: '+',
          what: `roles ${q(r.key)}`,
          run: async () => void (await m.roles.create(t, actor, null, { ...r, permissions: await resolve() })),
        });
        return;
      }
      const fields = changedFields(r, before);
      if (fields.length)
        changes.push({
          op: '~',
          what: `roles ${q(r.key)}`,
          fields,
          run: async () =>
            void (await m.roles.update(t, actor, null, r.key, {
              ...pick(r, fields),
              permissions: fields.includes('permissions') ? await resolve() : undefined,
            })),
        });
    });
    const named = new Set(file.roles.map((r) => r.key));
    for (const r of current.roles ?? [])
      if (!named.has(r.key)) {
        if (!opts.prune) unmanaged.push(`roles ${q(r.key)}`);
        else {
          roleKeys.delete(r.key);
          removals.push({ op: '-', what: `roles ${q(r.key)}`, run: async () => m.roles.delete(t, actor, null, r.key, undefined) });
        }
      }
  }

  // ---- settings
  const s = file.settings;
  const cs = current.settings!;
  if (s?.default_role !== undefined && !roleKeys.has(s.default_role)) problems.push(`settings.default_role: no tenant-wide role ${q(s.default_role)}`);
  if (s?.default_role !== undefined && s.default_role !== cs.default_role)
    changes.push({ op: '~', what: 'settings', fields: ['default_role'], run: async () => void (await m.roles.setDefaultRole(t, actor, s.default_role!)) });
  if (s?.mfa_policy !== undefined && s.mfa_policy !== cs.mfa_policy)
    changes.push({ op: '~', what: 'settings', fields: ['mfa_policy'], run: async () => void (await m.mfaPolicy.setTenant(t, actor, s.mfa_policy!)) });
  if (s?.account_linking !== undefined && s.account_linking !== cs.account_linking)
    changes.push({ op: '~', what: 'settings', fields: ['account_linking'], run: async () => void (await m.social.setSettings(t, actor, s.account_linking!)) });
  if (s?.tokens !== undefined) {
    const fields = changedFields(s.tokens, cs.tokens);
    if (fields.length) changes.push({ op: '~', what: 'settings.tokens', fields, run: async () => void (await m.tokenSettings.put(t, s.tokens!, actor)) });
  }
  if (s?.email_sender !== undefined) {
    const fields = changedFields(s.email_sender, cs.email_sender);
    if (fields.length)
      changes.push({ op: '~', what: 'settings.email_sender', fields, run: async () => void (await m.email.putSettings(tenant, actor, s.email_sender!)) });
  }
  if (s?.mcp !== undefined) {
    const fields = changedFields(s.mcp, cs.mcp);
    // The onboarding policy has no event of its own (as PUT /v1/mcp/settings).
    if (fields.length) changes.push({ op: '~', what: 'settings.mcp', fields, run: async () => void (await m.mcp.putSettings(t, s.mcp!)) });
  }

  // ---- branding
  const b = file.branding;
  if (b?.default_locale !== undefined && b.default_locale !== current.branding!.default_locale)
    changes.push({
      op: '~',
      what: 'branding',
      fields: ['default_locale'],
      run: async () => void (await m.branding.putLocale(t, actor, b.default_locale as Locale)),
    });
  if (b?.texts !== undefined) {
    const texts = Object.fromEntries(Object.entries(b.texts).filter(([, v]) => Object.keys(v ?? {}).length > 0)) as Record<string, Record<string, string>>;
    try {
      checkOverrides(texts);
    } catch (err) {
      problems.push(`branding.texts: ${isAppError(err) ? err.description : (err as Error).message}`);
    }
    if (!isDeepStrictEqual(texts, current.branding!.texts))
      changes.push({ op: '~', what: 'branding', fields: ['texts'], run: async () => void (await m.branding.putTexts(t, actor, texts)) });
  }

  // ---- clients (by client_name)
  if (file.clients) {
    const have = new Map((current.clients ?? []).map((c) => [c.client_name, c]));
    const ids = new Map(
      (
        await all(
          (after) => m.clients.list(t, { after, limit: PAGE }),
          (c) => c.client_id,
        )
      ).map((c) => [c.client_name, c.client_id]),
    );
    for (const c of file.clients) {
      const before = have.get(c.client_name);
      if (!before) {
        changes.push({
          op: '+',
          what: `clients ${q(c.client_name)}`,
          run: async () => {
            const made = await m.clients.create(t, c, actor);
            return made.client_secret
              ? `client ${q(c.client_name)}: client_id ${made.client_id}, client_secret (shown once, store it now) ${made.client_secret}`
              : `client ${q(c.client_name)}: client_id ${made.client_id}`;
          },
        });
        continue;
      }
      const fields = changedFields(c, before as Record<string, unknown>);
      if (fields.length)
        changes.push({
          op: '~',
          what: `clients ${q(c.client_name)}`,
          fields,
          run: async () => {
            const id = ids.get(c.client_name)!;
            const made = await m.clients.update(t, id, pick(c, fields), actor);
            return made.client_secret ? `client ${q(c.client_name)} (${id}): client_secret (shown once, store it now) ${made.client_secret}` : undefined;
          },
        });
    }
    const named = new Set(file.clients.map((c) => c.client_name));
    for (const c of current.clients ?? [])
      if (!named.has(c.client_name)) {
        if (!opts.prune) unmanaged.push(`clients ${q(c.client_name)}`);
        else removals.push({ op: '-', what: `clients ${q(c.client_name)}`, run: async () => m.clients.delete(t, ids.get(c.client_name)!, actor) });
      }
  }

  // ---- organizations (by slug), their own policies and webhooks
  if (file.organizations) {
    const have = new Map((current.organizations ?? []).map((o) => [o.slug, o]));
    const ORG_FIELDS = ['name', 'domain', 'brand_logo_url', 'brand_primary_color', 'brand_display_name', 'sso_required'] as const;
    const patchOf = (o: OrganizationEntry, fields: string[]) => {
      const map: Record<string, string> = {
        name: 'name',
        domain: 'domain',
        brand_logo_url: 'brandLogoUrl',
        brand_primary_color: 'brandPrimaryColor',
        brand_display_name: 'brandDisplayName',
        sso_required: 'ssoRequired',
      };
      return Object.fromEntries(fields.map((f) => [map[f]!, o[f as keyof OrganizationEntry]]));
    };
    for (const o of file.organizations) {
      const before = have.get(o.slug);
      const label = `organizations ${q(o.slug)}`;
      const orgId = async () => (await orgIds()).get(o.slug)!;
      const plain = pick(
        o,
        [...ORG_FIELDS].filter((f) => o[f] !== undefined),
      );
      if (!before) {
        const rest = Object.keys(plain).filter((f) => f !== 'name' && f !== 'domain' && plain[f] !== null && plain[f] !== false);
        changes.push({
          op: '+',
          what: label,
          run: async () => {
            const made = await m.organizations.create(t, actor, { name: o.name, slug: o.slug, domain: o.domain ?? undefined });
            if (rest.length) await m.organizations.update(t, actor, made.id, patchOf(o, rest));
          },
        });
      } else {
        const fields = changedFields(plain, before);
        if (fields.length)
          changes.push({ op: '~', what: label, fields, run: async () => void (await m.organizations.update(t, actor, await orgId(), patchOf(o, fields))) });
      }
      if (o.mfa_policy !== undefined && !(before === undefined && o.mfa_policy === null) && o.mfa_policy !== before?.mfa_policy)
        changes.push({
          op: '~',
          what: label,
          fields: ['mfa_policy'],
          run: async () => void (await m.mfaPolicy.setOrganization(t, actor, await orgId(), o.mfa_policy as MfaPolicy | null)),
        });
      if (
        o.webauthn_aaguid_allowlist !== undefined &&
        !(before === undefined && o.webauthn_aaguid_allowlist === null) &&
        !isDeepStrictEqual(o.webauthn_aaguid_allowlist, before?.webauthn_aaguid_allowlist)
      )
        changes.push({
          op: '~',
          what: label,
          fields: ['webauthn_aaguid_allowlist'],
          run: async () => void (await m.webauthnPolicy.set(t, actor, await orgId(), o.webauthn_aaguid_allowlist ?? null)),
        });
      if (o.webhooks) {
        const hooks = new Map((before?.webhooks ?? []).map((h) => [href(h.url), h]));
        const endpoints = async () => new Map((await m.webhooks.list(t, await orgId(), undefined, PAGE)).map((e) => [href(e.url), e.id]));
        for (const h of o.webhooks) {
          const was = hooks.get(href(h.url));
          const events = h.events ?? ['*'];
          if (!was)
            changes.push({
              op: '+',
              what: `${label} webhooks ${q(h.url)}`,
              run: async () => {
                const made = await m.webhooks.create(t, actor, await orgId(), { url: h.url, events });
                return `webhook ${q(h.url)} of ${o.slug}: signing secret (shown once, store it now) ${made.secret}`;
              },
            });
          else if (!(events.length === was.events!.length && events.every((e) => was.events!.includes(e))))
            changes.push({
              op: '~',
              what: `${label} webhooks ${q(h.url)}`,
              fields: ['events'],
              run: async () => void (await m.webhooks.update(t, actor, await orgId(), (await endpoints()).get(href(h.url))!, { events })),
            });
        }
        const named = new Set(o.webhooks.map((h) => href(h.url)));
        for (const h of before?.webhooks ?? [])
          if (!named.has(href(h.url))) {
            const what = `${label} webhooks ${q(h.url)}`;
            if (!opts.prune) unmanaged.push(what);
            else removals.push({ op: '-', what, run: async () => m.webhooks.delete(t, actor, await orgId(), (await endpoints()).get(href(h.url))!) });
          }
      }
    }
    const named = new Set(file.organizations.map((o) => o.slug));
    for (const o of current.organizations ?? [])
      if (!named.has(o.slug)) {
        const what = `organizations ${q(o.slug)}`;
        if (!opts.prune) unmanaged.push(what);
        else removals.push({ op: '-', what, run: async () => m.organizations.delete(t, actor, currentOrgIds.get(o.slug)!) });
      }
  }

  // ---- social connections (by name)
  if (file.social_connections) {
    const records = new Map((await m.social.list(t)).map((c) => [c.name, c]));
    file.social_connections.forEach((c, i) => {
      const given = [c.preset, c.oidc, c.oauth2].filter((x) => x !== undefined).length;
      if (given !== 1) problems.push(`social_connections.${i}: give exactly one of preset, oidc, oauth2`);
      const value = typeof c.client_secret === 'string' ? secret(c.client_secret, `social_connections.${i}.client_secret`) : c.client_secret;
      const rec = records.get(c.name);
      const label = `social_connections ${q(c.name)}`;
      const settings = pick(
        c,
        ['client_id', 'scopes', 'sign_in', 'sign_up', 'display_order'].filter((k) => c[k as keyof SocialEntry] !== undefined),
      );
      if (!rec) {
        changes.push({
          op: '+',
          what: label,
          run: async () =>
            void (await m.social.create(t, actor, {
              ...settings,
              name: c.name,
              client_id: c.client_id,
              ...(value !== undefined ? { client_secret: value } : {}),
              ...(c.preset !== undefined ? { preset: c.preset as never } : {}),
              ...(c.oidc !== undefined ? { oidc: c.oidc } : {}),
              ...(c.oauth2 !== undefined ? { oauth2: c.oauth2 as never } : {}),
            })),
        });
        return;
      }
      if (given === 1 && !isDeepStrictEqual(providerKey(c), providerKey(socialProvider(rec))))
        problems.push(
          `social_connections.${i}: the provider of ${q(c.name)} cannot change; remove the connection (--prune) and add it again under another name`,
        );
      const before = { client_id: rec.clientId, scopes: rec.scopes, sign_in: rec.signIn, sign_up: rec.signUp, display_order: rec.displayOrder };
      const fields = changedFields(settings, before);
      if (value !== undefined) {
        const stored = rec.secretEnc === null ? null : ctx.envelope.decrypt(rec.secretEnc, `social_secret:${t}:${rec.id}`);
        if (stored !== value) fields.push('client_secret');
      }
      if (fields.length)
        changes.push({
          op: '~',
          what: label,
          fields,
          run: async () =>
            void (await m.social.update(t, actor, rec.id, {
              ...pick(
                settings,
                fields.filter((f) => f !== 'client_secret'),
              ),
              ...(fields.includes('client_secret') ? { client_secret: value } : {}),
            })),
        });
    });
    const named = new Set(file.social_connections.map((c) => c.name));
    for (const [name, rec] of records)
      if (!named.has(name)) {
        const what = `social_connections ${q(name)}`;
        if (!opts.prune) unmanaged.push(what);
        else removals.push({ op: '-', what, run: async () => m.social.delete(t, actor, rec.id) });
      }
  }

  if (problems.length) throw new PlanError(problems);
  // Removals after every creation (a role's members are reassigned only to roles that exist);
  // roles before the resource servers their permissions name.
  const order = ['roles', 'clients', 'organizations', 'social_connections', 'resource_servers'];
  removals.sort((a, b) => order.findIndex((o) => a.what.startsWith(o)) - order.findIndex((o) => b.what.startsWith(o)));
  return { changes: [...changes, ...removals], unmanaged };
}

/** The plan as printed before it is applied. */
export function describePlan(plan: Plan): string[] {
  const lines = plan.changes.map((c) => `${c.op} ${c.what}${c.fields ? ` (${c.fields.join(', ')})` : ''}`);
  for (const u of plan.unmanaged) lines.push(`  ${u}: not in the file, kept (--prune removes it)`);
  return lines;
}
