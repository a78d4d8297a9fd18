/**
 * Provider presets: the endpoints, defaults and quirks of well-known upstreams, so an operator
 * gives only a name, a client id and a secret. Fields given explicitly override the preset's.
 */
import type { ProviderKind, UpstreamAuthMethod } from '../storage/repos/connect.js';

export interface Preset {
  kind: ProviderKind;
  issuer: string | null;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  tokenEndpointAuthMethod: UpstreamAuthMethod;
  scopes: string[];
  authorizeParams: Record<string, string>;
}

export const PRESETS = {
  // Offline access needs access_type=offline; prompt=consent makes Google send a refresh token
  // again when the user reconnects.
  google: {
    kind: 'oauth2',
    issuer: 'https://accounts.google.com',
    authorizationEndpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenEndpoint: 'https://oauth2.googleapis.com/token',
    revocationEndpoint: 'https://oauth2.googleapis.com/revoke',
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: ['openid', 'email'],
    authorizeParams: { access_type: 'offline', prompt: 'consent' },
  },
  // The multi-tenant "common" endpoints; ID tokens there carry the user's tenant as issuer, so
  // the default scopes ask for none (offline_access for a refresh token, Graph's User.Read).
  microsoft: {
    kind: 'oauth2',
    issuer: null,
    authorizationEndpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenEndpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    revocationEndpoint: null,
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: ['offline_access', 'User.Read'],
    authorizeParams: {},
  },
  // GitHub has no RFC 7009 endpoint (its token deletion API is not OAuth); tokens of GitHub Apps
  // with expiring user tokens come with a refresh token.
  github: {
    kind: 'oauth2',
    issuer: null,
    authorizationEndpoint: 'https://github.com/login/oauth/authorize',
    tokenEndpoint: 'https://github.com/login/oauth/access_token',
    revocationEndpoint: null,
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: ['read:user'],
    authorizeParams: {},
  },
  // Slack's v2 endpoints; refresh tokens come when token rotation is enabled for the app.
  slack: {
    kind: 'oauth2',
    issuer: null,
    authorizationEndpoint: 'https://slack.com/oauth/v2/authorize',
    tokenEndpoint: 'https://slack.com/api/oauth.v2.access',
    revocationEndpoint: null,
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: [],
    authorizeParams: {},
  },
} as const satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];
