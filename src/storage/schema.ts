import type { CredentialTables } from './tables/credentials.js';
import type { FoundationTables } from './tables/foundation.js';
import type { DirectoryTables } from './tables/directory.js';
import type { LimitTables } from './tables/limits.js';
import type { ManagementTables } from './tables/management.js';
import type { WebhookTables } from './tables/webhooks.js';
import type { OAuthTables } from './tables/oauth.js';
import type { SigninTables } from './tables/signin.js';
import type { ConnectTables } from './tables/connect.js';
import type { SsoTables } from './tables/sso.js';
import type { UpstreamTables } from './tables/upstream.js';
import type { MfaTables } from './tables/mfa.js';
import type { McpTables } from './tables/mcp.js';
import type { BrandingTables } from './tables/branding.js';
import type { ConsoleTables } from './tables/console.js';
import type { DeviceTables } from './tables/device.js';
import type { RoleTables } from './tables/roles.js';
import type { SocialTables } from './tables/social.js';
import type { EmailTables } from './tables/email.js';
import type { TransferTables } from './tables/transfers.js';
import type { InvitationTables } from './tables/invitations.js';
import type { SignupTables } from './tables/signup.js';

/**
 * The whole database as Kysely sees it: one interface per area in `tables/`, joined here.
 * Conventions (both dialects): times are integer epoch milliseconds, JSON is text, booleans are
 * 0/1 integers, secrets are stored only as SHA-256 hex or as envelope ciphertext.
 */
export interface Database
  extends
    FoundationTables,
    ManagementTables,
    OAuthTables,
    WebhookTables,
    DirectoryTables,
    SigninTables,
    LimitTables,
    ConnectTables,
    SsoTables,
    CredentialTables,
    MfaTables,
    McpTables,
    ConsoleTables,
    UpstreamTables,
    BrandingTables,
    DeviceTables,
    RoleTables,
    SocialTables,
    EmailTables,
    TransferTables,
    InvitationTables,
    SignupTables {}
