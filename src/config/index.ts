import path from 'node:path';
import { z } from 'zod';

/**
 * Every runtime option of Keyhall. Each is read from one environment variable; the doc comment
 * is the reference and docs/configuration.md mirrors it.
 */
const schema = z.object({
  /** KEYHALL_PORT: TCP port to listen on (the `--port` flag wins). */
  port: z.coerce.number().int().min(0).max(65535).default(3000),
  /** KEYHALL_HOST: interface to bind (the `--host` flag wins). Loopback by default. */
  host: z.string().min(1).default('127.0.0.1'),
  /** KEYHALL_DATA_DIR: directory for the embedded SQLite database and the master key file. */
  dataDir: z.string().min(1).default('./data'),
  /** KEYHALL_DATABASE_URL: `postgres://…` selects PostgreSQL; unset means SQLite in the data dir. */
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  /** KEYHALL_DATABASE_POOL_SIZE: PostgreSQL connections this instance keeps at most. */
  databasePoolSize: z.coerce.number().int().min(1).max(1000).default(10),
  /** KEYHALL_MASTER_KEY: base64 of 32 random bytes; required with PostgreSQL. */
  masterKey: z.string().optional(),
  /**
   * KEYHALL_TRUST_PROXY: honour X-Forwarded-Host/-Proto/-For. `true` (from any peer) or a
   * comma-separated list of proxy addresses/CIDRs. Unset: forwarded headers are ignored.
   */
  trustProxy: z.string().optional(),
  /** KEYHALL_LOG_LEVEL: pino level (fatal, error, warn, info, debug, trace, silent). */
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** KEYHALL_BODY_LIMIT: largest accepted request body in bytes. */
  bodyLimit: z.coerce
    .number()
    .int()
    .min(1024)
    .max(50 * 1024 * 1024)
    .default(1024 * 1024),
  /** KEYHALL_KEY_OVERLAP_SECONDS: how long a rotated-out signing key stays in the JWKS. */
  keyOverlapSeconds: z.coerce
    .number()
    .int()
    .min(0)
    .default(24 * 3600),
  /** KEYHALL_ACCESS_TOKEN_TTL_SECONDS: lifetime of issued access tokens (`expires_in`). */
  accessTokenTtlSeconds: z.coerce
    .number()
    .int()
    .min(30)
    .max(24 * 3600)
    .default(600),
  /** KEYHALL_REFRESH_TOKEN_TTL_SECONDS: absolute lifetime of a refresh-token grant (its family). */
  refreshTokenTtlSeconds: z.coerce
    .number()
    .int()
    .min(60)
    .default(30 * 24 * 3600),
  /**
   * KEYHALL_DPOP_NONCE: require a server-provided nonce in every DPoP proof (RFC 9449 §8/§9;
   * answered with `use_dpop_nonce` and a `DPoP-Nonce` header). Off by default.
   */
  dpopNonce: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  /** KEYHALL_EXPORT_TTL_SECONDS: how long a finished export (GET /v1/exports/…/download) is kept (docs/import-export.md). */
  exportTtlSeconds: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(86_400),
  /** KEYHALL_CACHE_TTL_MS: how long an instance caches tenants and signing keys. */
  cacheTtlMs: z.coerce.number().int().min(0).max(60_000).default(5_000),
  /**
   * KEYHALL_CACHE_MAX_TENANTS: how many tenants each per-tenant cache holds (hosts, signing keys,
   * token lifetimes, browser origins); least recently used first out.
   */
  cacheMaxTenants: z.coerce.number().int().min(1).default(10_000),
  /** KEYHALL_CACHE_MAX_CLIENTS: how many clients (and, separately, resource servers) an instance caches; LRU. */
  cacheMaxClients: z.coerce.number().int().min(1).default(50_000),
  /** KEYHALL_SHUTDOWN_TIMEOUT_MS: in-flight requests get this long to finish on SIGTERM. */
  shutdownTimeoutMs: z.coerce.number().int().min(0).default(10_000),
  /**
   * KEYHALL_EGRESS_ALLOW: comma-separated CIDRs that outbound requests (webhooks, later the vault
   * and jwks_uri) may reach even though they are private or loopback; plain http is allowed only
   * to these. For tests and private deployments.
   */
  egressAllow: z.string().optional(),
  /** KEYHALL_DNS_SERVERS: resolvers for domain-verification TXT lookups (`ip` or `ip:port`, comma-separated); unset: the system's. */
  dnsServers: z.string().optional(),
  /** KEYHALL_WEBHOOK_TIMEOUT_MS: total time limit of one webhook delivery attempt. */
  webhookTimeoutMs: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /**
   * KEYHALL_WEBHOOK_RETRY_SCHEDULE: seconds to wait before each attempt (the first is 0); its
   * length is the number of attempts. The spec's schedule is the default.
   */
  webhookRetrySchedule: z
    .string()
    .regex(/^\d+(,\d+){0,9}$/, 'comma-separated seconds, e.g. 0,10,60,300,1800')
    .default('0,10,60,300,1800')
    .transform((v) => v.split(',').map(Number)),
  /**
   * KEYHALL_LOGOUT_RETRY_SCHEDULE: seconds to wait before each attempt to deliver a back-channel
   * Logout Token (the first is 0); its length is the number of attempts.
   */
  logoutRetrySchedule: z
    .string()
    .regex(/^\d+(,\d+){0,9}$/, 'comma-separated seconds, e.g. 0,10,60,300,1800')
    .default('0,10,60,300,1800')
    .transform((v) => v.split(',').map(Number)),
  /**
   * KEYHALL_SMTP_URL: the SMTP server email goes through (nodemailer): `smtp://user:pass@host:587`
   * (STARTTLS when offered), `smtps://…:465` (TLS). Unset: the embedded dev mailbox (docs/email.md).
   */
  smtpUrl: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** KEYHALL_EMAIL_FROM: the sender of a tenant that set none (`/v1/email_settings`); default no-reply@ the tenant's host. */
  emailFrom: z.email().optional(),
  /** KEYHALL_EMAIL_RETRY_SCHEDULE: seconds before each sending attempt of an email (its length is the number of attempts). */
  emailRetrySchedule: z
    .string()
    .regex(/^\d+(,\d+){0,9}$/, 'comma-separated seconds, e.g. 0,30,120,600,1800,3600')
    .default('0,30,120,600,1800,3600')
    .transform((v) => v.split(',').map(Number)),
  /** KEYHALL_DISPATCH_INTERVAL_MS: how often the webhook dispatcher looks for due deliveries. */
  dispatchIntervalMs: z.coerce.number().int().min(10).max(60_000).default(1000),
  /** KEYHALL_SESSION_IDLE_SECONDS: a hosted-login session ends after this long without use. */
  sessionIdleSeconds: z.coerce
    .number()
    .int()
    .min(60)
    .default(12 * 3600),
  /** KEYHALL_SESSION_MAX_SECONDS: absolute lifetime of a hosted-login session, used or not. */
  sessionMaxSeconds: z.coerce
    .number()
    .int()
    .min(60)
    .default(7 * 24 * 3600),
  /** KEYHALL_PAR_TTL_SECONDS: lifetime of a /par request_uri (`expires_in`). */
  parTtlSeconds: z.coerce.number().int().min(5).max(600).default(60),
  /** KEYHALL_DEVICE_CODE_TTL_SECONDS: lifetime of a device grant's device_code and user code (RFC 8628 `expires_in`). */
  deviceCodeTtlSeconds: z.coerce.number().int().min(60).max(3600).default(600),
  /** KEYHALL_DEVICE_MAX_UNDECIDED_PER_CLIENT: user codes a client may have waiting or expired unused within an hour. */
  deviceMaxUndecidedPerClient: z.coerce.number().int().min(1).max(100_000).default(200),
  /** KEYHALL_CODE_TTL_SECONDS: lifetime of an authorization code. */
  codeTtlSeconds: z.coerce.number().int().min(5).max(600).default(60),
  /** KEYHALL_VAULT_REFRESH_SKEW_SECONDS: a vault token expiring within this is refreshed before it is returned. */
  vaultRefreshSkewSeconds: z.coerce.number().int().min(0).max(3600).default(60),
  /** KEYHALL_UPSTREAM_TIMEOUT_MS: time limit of one request to an upstream provider (discovery, code, refresh, revocation). */
  upstreamTimeoutMs: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** KEYHALL_CREDENTIAL_OFFER_TTL_SECONDS: how long a credential offer's pre-authorized code can be redeemed. */
  credentialOfferTtlSeconds: z.coerce
    .number()
    .int()
    .min(30)
    .max(30 * 24 * 3600)
    .default(300),
  /** KEYHALL_CREDENTIAL_OFFER_SWEEP_SECONDS: how often each instance records `credential.offer.expired` for offers that died unredeemed. */
  credentialOfferSweepSeconds: z.coerce.number().int().min(1).max(3600).default(60),
  /** KEYHALL_CREDENTIAL_NONCE_TTL_SECONDS: lifetime of a c_nonce from the nonce endpoint. */
  credentialNonceTtlSeconds: z.coerce.number().int().min(30).max(3600).default(300),
  /** KEYHALL_STATUS_LIST_TTL_SECONDS: the status list token's `ttl` and its HTTP max-age. */
  statusListTtlSeconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * 3600)
    .default(300),
  /** KEYHALL_LOGIN_FLOW_TTL_SECONDS: how long a login/consent page of one /authorize request stays usable. */
  loginFlowTtlSeconds: z.coerce
    .number()
    .int()
    .min(60)
    .max(24 * 3600)
    .default(1800),
  /** KEYHALL_LOGIN_MAX_FAILURES_ACCOUNT: failed logins per tenant+account per window before 429. */
  loginMaxFailuresPerAccount: z.coerce.number().int().min(1).default(10),
  /** KEYHALL_LOGIN_MAX_FAILURES_IP: failed logins per tenant+client IP per window before 429. */
  loginMaxFailuresPerIp: z.coerce.number().int().min(1).default(100),
  /** KEYHALL_LOGIN_FAILURE_WINDOW_SECONDS: the failed-login window; a limit lifts when it ends. */
  loginFailureWindowSeconds: z.coerce.number().int().min(1).default(900),
  /**
   * KEYHALL_WEBAUTHN_TRUST_ANCHORS: path of a PEM file of attestation root certificates. When set,
   * a passkey registered under an organization's AAGUID allowlist must carry an attestation whose
   * chain verifies to one of them (docs/passkeys.md).
   */
  webauthnTrustAnchors: z.string().min(1).optional(),
  /**
   * KEYHALL_WEBAUTHN_MDS_FILE: path of a FIDO Metadata Service BLOB (the JWT from
   * https://mds3.fidoalliance.org/), verified offline at start; its per-AAGUID attestation roots
   * are trust anchors and its revoked/compromised status reports refuse authenticators.
   */
  webauthnMdsFile: z.string().min(1).optional(),
  /** KEYHALL_WEBAUTHN_MDS_ROOT: a PEM file of the root(s) the BLOB must chain to (default: the FIDO MDS roots, GlobalSign R3 and R46). */
  webauthnMdsRoot: z.string().min(1).optional(),
  /** KEYHALL_API_RATE_LIMIT: /v1 requests per API key per minute (all instances together). */
  apiRateLimit: z.coerce.number().int().min(1).max(1_000_000).default(6000),
  /**
   * KEYHALL_METRICS_PORT: serve Prometheus `/metrics` on this port (its own listener, never a
   * tenant host). Unset, with KEYHALL_METRICS_TOKEN unset too: no metrics are collected.
   */
  metricsPort: z.coerce.number().int().min(0).max(65535).optional(),
  /** KEYHALL_METRICS_HOST: interface of the metrics listener. Loopback by default. */
  metricsHost: z.string().min(1).default('127.0.0.1'),
  /**
   * KEYHALL_METRICS_TOKEN: also answer `/metrics` on the main listener (any host), to requests
   * bearing `Authorization: Bearer <this token>`. At least 32 characters.
   */
  metricsToken: z.string().min(32, 'must be at least 32 characters').optional(),
  /**
   * KEYHALL_METRICS_TENANT_LABEL: add a `tenant` label (the tenant id) to request, token and
   * login metrics. Off by default: one series per tenant multiplies the metrics' cardinality.
   */
  metricsTenantLabel: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  /** KEYHALL_BOOTSTRAP: on an empty database, create a tenant for localhost:<port> at start. */
  bootstrap: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1'),
});

export type Config = z.infer<typeof schema>;

const envNames: Record<keyof Config, string> = {
  port: 'KEYHALL_PORT',
  host: 'KEYHALL_HOST',
  dataDir: 'KEYHALL_DATA_DIR',
  databaseUrl: 'KEYHALL_DATABASE_URL',
  databasePoolSize: 'KEYHALL_DATABASE_POOL_SIZE',
  masterKey: 'KEYHALL_MASTER_KEY',
  trustProxy: 'KEYHALL_TRUST_PROXY',
  logLevel: 'KEYHALL_LOG_LEVEL',
  bodyLimit: 'KEYHALL_BODY_LIMIT',
  keyOverlapSeconds: 'KEYHALL_KEY_OVERLAP_SECONDS',
  accessTokenTtlSeconds: 'KEYHALL_ACCESS_TOKEN_TTL_SECONDS',
  refreshTokenTtlSeconds: 'KEYHALL_REFRESH_TOKEN_TTL_SECONDS',
  dpopNonce: 'KEYHALL_DPOP_NONCE',
  exportTtlSeconds: 'KEYHALL_EXPORT_TTL_SECONDS',
  cacheTtlMs: 'KEYHALL_CACHE_TTL_MS',
  cacheMaxTenants: 'KEYHALL_CACHE_MAX_TENANTS',
  cacheMaxClients: 'KEYHALL_CACHE_MAX_CLIENTS',
  shutdownTimeoutMs: 'KEYHALL_SHUTDOWN_TIMEOUT_MS',
  bootstrap: 'KEYHALL_BOOTSTRAP',
  apiRateLimit: 'KEYHALL_API_RATE_LIMIT',
  webauthnTrustAnchors: 'KEYHALL_WEBAUTHN_TRUST_ANCHORS',
  webauthnMdsFile: 'KEYHALL_WEBAUTHN_MDS_FILE',
  webauthnMdsRoot: 'KEYHALL_WEBAUTHN_MDS_ROOT',
  egressAllow: 'KEYHALL_EGRESS_ALLOW',
  dnsServers: 'KEYHALL_DNS_SERVERS',
  webhookTimeoutMs: 'KEYHALL_WEBHOOK_TIMEOUT_MS',
  webhookRetrySchedule: 'KEYHALL_WEBHOOK_RETRY_SCHEDULE',
  logoutRetrySchedule: 'KEYHALL_LOGOUT_RETRY_SCHEDULE',
  dispatchIntervalMs: 'KEYHALL_DISPATCH_INTERVAL_MS',
  smtpUrl: 'KEYHALL_SMTP_URL',
  emailFrom: 'KEYHALL_EMAIL_FROM',
  emailRetrySchedule: 'KEYHALL_EMAIL_RETRY_SCHEDULE',
  sessionIdleSeconds: 'KEYHALL_SESSION_IDLE_SECONDS',
  sessionMaxSeconds: 'KEYHALL_SESSION_MAX_SECONDS',
  parTtlSeconds: 'KEYHALL_PAR_TTL_SECONDS',
  codeTtlSeconds: 'KEYHALL_CODE_TTL_SECONDS',
  deviceCodeTtlSeconds: 'KEYHALL_DEVICE_CODE_TTL_SECONDS',
  deviceMaxUndecidedPerClient: 'KEYHALL_DEVICE_MAX_UNDECIDED_PER_CLIENT',
  credentialOfferTtlSeconds: 'KEYHALL_CREDENTIAL_OFFER_TTL_SECONDS',
  credentialOfferSweepSeconds: 'KEYHALL_CREDENTIAL_OFFER_SWEEP_SECONDS',
  credentialNonceTtlSeconds: 'KEYHALL_CREDENTIAL_NONCE_TTL_SECONDS',
  statusListTtlSeconds: 'KEYHALL_STATUS_LIST_TTL_SECONDS',
  loginFlowTtlSeconds: 'KEYHALL_LOGIN_FLOW_TTL_SECONDS',
  vaultRefreshSkewSeconds: 'KEYHALL_VAULT_REFRESH_SKEW_SECONDS',
  upstreamTimeoutMs: 'KEYHALL_UPSTREAM_TIMEOUT_MS',
  loginMaxFailuresPerAccount: 'KEYHALL_LOGIN_MAX_FAILURES_ACCOUNT',
  loginMaxFailuresPerIp: 'KEYHALL_LOGIN_MAX_FAILURES_IP',
  loginFailureWindowSeconds: 'KEYHALL_LOGIN_FAILURE_WINDOW_SECONDS',
  metricsPort: 'KEYHALL_METRICS_PORT',
  metricsHost: 'KEYHALL_METRICS_HOST',
  metricsToken: 'KEYHALL_METRICS_TOKEN',
  metricsTenantLabel: 'KEYHALL_METRICS_TENANT_LABEL',
};

export class ConfigError extends Error {}

/** Reads the configuration from an environment (process.env by default), with overrides. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Record<keyof Config, unknown>> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(envNames)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value !== undefined) raw[key] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path[0] as keyof Config | undefined;
    throw new ConfigError(`${key ? envNames[key] : 'configuration'}: ${issue?.message ?? 'invalid'}`);
  }
  return { ...parsed.data, dataDir: path.resolve(parsed.data.dataDir) };
}
