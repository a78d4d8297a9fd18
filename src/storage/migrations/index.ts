import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_management.js';
import * as m0003 from './0003_oauth.js';
import * as m0004 from './0004_directory.js';
import * as m0005 from './0005_webhooks.js';
import * as m0006 from './0006_signin.js';
import * as m0007 from './0007_oauth_remote_keys.js';
import * as m0008 from './0008_signin_consent_resources.js';
import * as m0009 from './0009_rate_limits.js';
import * as m0010 from './0010_resource_servers.js';
import * as m0012 from './0012_webhook_edits_client_origins.js';
import * as m0013 from './0013_mfa.js';
import * as m0014 from './0014_connected_accounts.js';
import * as m0015 from './0015_credentials.js';
import * as m0017 from './0017_sso.js';
import * as m0018 from './0018_mcp.js';
import * as m0019 from './0019_console.js';
import * as m0020 from './0020_saml.js';
import * as m0022 from './0022_full_keys_new_permissions.js';
import * as m0023 from './0023_signing_keys_published_until.js';
import * as m0024 from './0024_events_actor_index.js';
import * as m0025 from './0025_directory_read.js';
import * as m0026 from './0026_user_password_set_by.js';
import * as m0027 from './0027_federated_trust.js';
import * as m0029 from './0029_saml_browser_binding.js';
import * as m0030 from './0030_passkey_disabled.js';
import * as m0031 from './0031_upstream_round_trips.js';
import * as m0032 from './0032_page_texts.js';
import * as m0034 from './0034_signin_engine_flows.js';
import * as m0035 from './0035_device_grant.js';
import * as m0036 from './0036_backchannel_logout.js';
import * as m0037 from './0037_client_request_objects_fapi.js';
import * as m0038 from './0038_organization_roles.js';
import * as m0039 from './0039_email.js';
import * as m0040 from './0040_social.js';
import * as m0041 from './0041_imports.js';
import * as m0042 from './0042_account.js';
import * as m0043 from './0043_signup.js';
import * as m0044 from './0044_invitations.js';
import * as m0045 from './0045_client_organizations_metadata.js';
import * as m0047 from './0047_social_vault_tokens.js';

/**
 * The one ordered list of migrations for SQLite and PostgreSQL. Add a file, then a line here;
 * never edit a migration that has shipped.
 */
const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_management': m0002,
  '0003_oauth': m0003,
  '0004_directory': m0004,
  '0005_webhooks': m0005,
  '0006_signin': m0006,
  '0007_oauth_remote_keys': m0007,
  '0008_signin_consent_resources': m0008,
  '0009_rate_limits': m0009,
  '0010_resource_servers': m0010,
  '0012_webhook_edits_client_origins': m0012,
  '0013_mfa': m0013,
  '0014_connected_accounts': m0014,
  '0015_credentials': m0015,
  '0017_sso': m0017,
  '0018_mcp': m0018,
  '0019_console': m0019,
  '0020_saml': m0020,
  '0022_full_keys_new_permissions': m0022,
  '0023_signing_keys_published_until': m0023,
  '0024_events_actor_index': m0024,
  '0025_directory_read': m0025,
  '0026_user_password_set_by': m0026,
  '0027_federated_trust': m0027,
  '0029_saml_browser_binding': m0029,
  '0030_passkey_disabled': m0030,
  '0031_upstream_round_trips': m0031,
  '0032_page_texts': m0032,
  '0034_signin_engine_flows': m0034,
  '0035_device_grant': m0035,
  '0036_backchannel_logout': m0036,
  '0037_client_request_objects_fapi': m0037,
  '0038_organization_roles': m0038,
  '0039_email': m0039,
  '0040_social': m0040,
  '0041_imports': m0041,
  '0042_account': m0042,
  '0043_signup': m0043,
  '0044_invitations': m0044,
  '0045_client_organizations_metadata': m0045,
  '0047_social_vault_tokens': m0047,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
