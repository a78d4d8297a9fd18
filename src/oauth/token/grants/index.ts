/**
 * The grant table: grant_type → handler. A grant plugs in by adding one entry here; discovery
 * lists exactly these. `authorization_code` (sign-in issue) and
 * `urn:ietf:params:oauth:grant-type:pre-authorized_code` (OID4VCI issue) come later.
 */
import { GRANT_TYPE } from '../../types.js';
import type { GrantHandler, GrantTable } from '../types.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { refreshTokenGrant } from './refresh-token.js';
import { tokenExchangeGrant } from './token-exchange.js';

export const GRANTS: GrantTable = new Map<string, GrantHandler>([
  [GRANT_TYPE.authorizationCode, authorizationCodeGrant],
  [GRANT_TYPE.clientCredentials, clientCredentialsGrant],
  [GRANT_TYPE.refreshToken, refreshTokenGrant],
  [GRANT_TYPE.tokenExchange, tokenExchangeGrant],
]);
