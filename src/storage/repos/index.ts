/**
 * The repositories over one executor: `repos(trx, dialect).users.find(…)`. Pass the root
 * database or a transaction; each repository is made on first use and kept for that executor,
 * so asking twice in one transaction costs nothing. Periodic sweeps count across all of them
 * (their counters live in the repository modules, see Sweeper in ../atomic.ts).
 */
import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import type { Database } from '../schema.js';
import { ApiKeyRepo } from './api-keys.js';
import { ConsoleSetupTokenRepo, TenantAdminRepo } from './console.js';
import { ConnectProviderRepo, ConnectedAccountRepo } from './connect.js';
import { CredentialNonceRepo, CredentialOfferRepo, CredentialRepo, CredentialTypeRepo, StatusListRepo } from './credentials.js';
import { DirectoryConnectionRepo } from './directory-connections.js';
import { DirectoryGroupRepo } from './directory-groups.js';
import { DirectoryUserRepo } from './directory-users.js';
import { EmailDevMailboxRepo, EmailOutboxRepo, EmailSettingsRepo, EmailTokenRepo } from './email.js';
import { EventRepo } from './events.js';
import { InvitationRepo } from './invitations.js';
import { LogoutDeliveryRepo } from './logout-deliveries.js';
import { MemberRepo } from './members.js';
import { MetaRepo } from './meta.js';
import { OAuthClientRepo } from './oauth-clients.js';
import { OAuthDeviceCodeRepo } from './oauth-device-codes.js';
import { OAuthResourceServerRepo } from './oauth-resource-servers.js';
import { OAuthRefreshTokenRepo } from './oauth-refresh-tokens.js';
import { OAuthReplayRepo, OAuthRevokedTokenRepo } from './oauth-replay.js';
import { OAuthSettingsRepo } from './oauth-settings.js';
import { MfaRepo } from './mfa.js';
import { OrganizationRepo } from './organizations.js';
import { RateLimitRepo } from './rate-limits.js';
import { RoleRepo } from './roles.js';
import { SigninConsentRepo, SigninLoginFailureRepo } from './signin-accounts.js';
import { SigninEngineFlowRepo } from './signin-engine-flows.js';
import { SigninSessionRepo } from './signin-sessions.js';
import { SigninStoreRepo } from './signin-store.js';
import { SigningKeyRepo } from './signing-keys.js';
import { UpstreamRoundTripRepo } from './upstream-round-trips.js';
import { SsoConnectionRepo } from './sso-connections.js';
import { SsoIdentityRepo } from './sso-identities.js';
import { SsoSamlRepo } from './sso-saml.js';
import { SocialConnectionRepo, SocialIdentityRepo, SocialSettingsRepo } from './social.js';
import { TenantRepo } from './tenants.js';
import { ImportExternalIdRepo, TransferJobRepo } from './transfers.js';
import { UserRepo } from './users.js';
import { EmailChallengeRepo, SigninPolicyRepo } from './signup.js';
import { McpSettingsRepo } from './mcp-settings.js';
import { PageTextsRepo } from './page-texts.js';
import { WebhookDeliveryRepo } from './webhook-deliveries.js';
import { WebhookEndpointRepo } from './webhook-endpoints.js';

const makers = {
  organizations: (db) => new OrganizationRepo(db),
  users: (db) => new UserRepo(db),
  members: (db) => new MemberRepo(db),
  roles: (db) => new RoleRepo(db),
  apiKeys: (db) => new ApiKeyRepo(db),
  events: (db, dialect) => new EventRepo(db, dialect),
  signingKeys: (db, dialect) => new SigningKeyRepo(db, dialect),
  tenants: (db, dialect) => new TenantRepo(db, dialect),
  meta: (db) => new MetaRepo(db),
  oauthClients: (db) => new OAuthClientRepo(db),
  resourceServers: (db) => new OAuthResourceServerRepo(db),
  refreshTokens: (db, dialect) => new OAuthRefreshTokenRepo(db, dialect),
  replay: (db) => new OAuthReplayRepo(db),
  revokedTokens: (db) => new OAuthRevokedTokenRepo(db),
  oauthSettings: (db) => new OAuthSettingsRepo(db),
  rateLimits: (db) => new RateLimitRepo(db),
  signinStore: (db) => new SigninStoreRepo(db),
  signinFlows: (db) => new SigninEngineFlowRepo(db),
  deviceCodes: (db) => new OAuthDeviceCodeRepo(db),
  sessions: (db) => new SigninSessionRepo(db),
  consents: (db) => new SigninConsentRepo(db),
  loginFailures: (db) => new SigninLoginFailureRepo(db),
  mfa: (db) => new MfaRepo(db),
  webhookEndpoints: (db) => new WebhookEndpointRepo(db),
  webhookDeliveries: (db, dialect) => new WebhookDeliveryRepo(db, dialect),
  logoutDeliveries: (db, dialect) => new LogoutDeliveryRepo(db, dialect),
  directoryConnections: (db) => new DirectoryConnectionRepo(db),
  directoryUsers: (db) => new DirectoryUserRepo(db),
  directoryGroups: (db) => new DirectoryGroupRepo(db),
  connectProviders: (db) => new ConnectProviderRepo(db),
  connectedAccounts: (db) => new ConnectedAccountRepo(db),
  ssoConnections: (db) => new SsoConnectionRepo(db),
  upstreamRoundTrips: (db) => new UpstreamRoundTripRepo(db),
  ssoIdentities: (db) => new SsoIdentityRepo(db),
  ssoSaml: (db) => new SsoSamlRepo(db),
  socialConnections: (db) => new SocialConnectionRepo(db),
  socialIdentities: (db) => new SocialIdentityRepo(db),
  socialSettings: (db) => new SocialSettingsRepo(db),
  credentialTypes: (db) => new CredentialTypeRepo(db),
  credentialOffers: (db) => new CredentialOfferRepo(db),
  credentialNonces: (db) => new CredentialNonceRepo(db),
  statusLists: (db) => new StatusListRepo(db),
  credentials: (db) => new CredentialRepo(db),
  mcpSettings: (db) => new McpSettingsRepo(db),
  pageTexts: (db) => new PageTextsRepo(db),
  tenantAdmins: (db) => new TenantAdminRepo(db),
  consoleSetupTokens: (db) => new ConsoleSetupTokenRepo(db),
  emailOutbox: (db, dialect) => new EmailOutboxRepo(db, dialect),
  emailTokens: (db) => new EmailTokenRepo(db),
  emailDevMailbox: (db) => new EmailDevMailboxRepo(db),
  emailSettings: (db) => new EmailSettingsRepo(db),
  transferJobs: (db) => new TransferJobRepo(db),
  importExternalIds: (db) => new ImportExternalIdRepo(db),
  invitations: (db) => new InvitationRepo(db),
  signinPolicies: (db) => new SigninPolicyRepo(db),
  emailChallenges: (db) => new EmailChallengeRepo(db),
} satisfies Record<string, (db: Kysely<Database>, dialect: Dialect) => object>;

export type Repos = { readonly [K in keyof typeof makers]: ReturnType<(typeof makers)[K]> };

const made = new WeakMap<Kysely<Database>, Repos>();

/** The repositories over `executor` (the root database or a transaction). */
export function repos(executor: Kysely<Database>, dialect: Dialect): Repos {
  const known = made.get(executor);
  if (known) return known;
  const out = {} as Repos;
  for (const [name, make] of Object.entries(makers) as Array<[keyof Repos, (db: Kysely<Database>, dialect: Dialect) => object]>) {
    let repo: object | undefined;
    Object.defineProperty(out, name, { enumerable: true, get: () => (repo ??= make(executor, dialect)) });
  }
  made.set(executor, out);
  return out;
}
