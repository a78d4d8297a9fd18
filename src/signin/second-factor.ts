/**
 * What a first factor leaves owing: the one rule, for every way in, of whether a sign-in must
 * still pass Keyhall's second factor (docs/passkeys.md, "MFA policy"; docs/sso.md, "MFA").
 */
import type { Acr } from '../oauth/authorize/acr.js';
import type { MfaService } from '../screens/mfa/service.js';

type Mfa = Pick<MfaService, 'secondFactorNeeded'>;
type Transaction = Parameters<MfaService['secondFactorNeeded']>[2]['trx'];

/** After a password: the tenant's, the organizations' and the user's own MFA rules, and the flow's acr. */
export function owedAfterPassword(mfa: Mfa, tenantId: string, userId: string, flow: { organizationId?: string | null; acr: Acr | null }): Promise<boolean> {
  return mfa.secondFactorNeeded(tenantId, userId, { organizationId: flow.organizationId, acr: flow.acr });
}

/**
 * After an upstream IdP (SSO): the session's methods, and whether the second factor is owed. The
 * IdP's MFA statement counts only when the connection trusts it, and satisfies every policy and
 * acr but a passkey's (`phr`: that is Keyhall's to check); otherwise the same rules as after a
 * password apply. Runs in the caller's transaction (the one that provisions the user).
 */
export async function owedAfterUpstream(
  mfa: Mfa,
  tenantId: string,
  userId: string,
  o: { trustedMfa: boolean; organizationId: string | null; acr: Acr | null; trx?: Transaction },
): Promise<{ amr: string[]; pending: boolean }> {
  const amr = o.trustedMfa ? ['fed', 'mfa'] : ['fed'];
  if (o.trustedMfa && o.acr !== 'phr') return { amr, pending: false };
  return { amr, pending: await mfa.secondFactorNeeded(tenantId, userId, { organizationId: o.organizationId, acr: o.acr, trx: o.trx }) };
}
