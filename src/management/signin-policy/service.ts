/**
 * The tenant's sign-in policy (docs/signup.md): self sign-up (`off | open | domains`), the
 * passwordless methods by email, and whether a verified email is required before a sign-in
 * completes. Stored in `signin_policies`; read on every login page, so it is cached per tenant
 * (KEYHALL_CACHE_TTL_MS; a change through this instance applies at once, other instances within
 * the TTL).
 */
import type { Actor } from '../../events/catalogue.js';
import { errors } from '../../kernel/errors.js';
import { DEFAULT_SIGNIN_POLICY, type PasswordlessMethod, type SigninPolicyRecord, type SignupMode } from '../../storage/repos/signup.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';

export interface SigninPolicyView {
  signup: SignupMode;
  signup_domains: string[];
  passwordless: PasswordlessMethod[];
  require_verified_email: boolean;
  updated_at: string | null;
}

export type SigninPolicyInput = Omit<SigninPolicyView, 'updated_at'>;

const view = (p: SigninPolicyRecord): SigninPolicyView => ({
  signup: p.signup,
  signup_domains: p.signupDomains,
  passwordless: p.passwordless,
  require_verified_email: p.requireVerifiedEmail,
  updated_at: p.updatedAt === null ? null : iso(p.updatedAt),
});

export class SigninPolicyService {
  readonly #cache = new Map<string, { policy: SigninPolicyRecord; until: number }>();

  constructor(
    private readonly deps: ManagementDeps,
    private readonly cache: { ttlMs: number; maxTenants: number },
  ) {}

  /** The policy in effect (the default when never set), cached. */
  async current(tenantId: string): Promise<SigninPolicyRecord> {
    const now = this.deps.clock.now();
    const hit = this.#cache.get(tenantId);
    if (hit && hit.until > now) return hit.policy;
    const policy = (await reposOf(this.deps).signinPolicies.get(tenantId)) ?? DEFAULT_SIGNIN_POLICY;
    if (this.#cache.size >= this.cache.maxTenants) this.#cache.clear();
    this.#cache.set(tenantId, { policy, until: now + this.cache.ttlMs });
    return policy;
  }

  async get(tenantId: string): Promise<SigninPolicyView> {
    return view((await reposOf(this.deps).signinPolicies.get(tenantId)) ?? DEFAULT_SIGNIN_POLICY);
  }

  async put(tenantId: string, actor: Actor, input: SigninPolicyInput): Promise<SigninPolicyView> {
    const domains = [...new Set(input.signup_domains.map((d) => d.toLowerCase()))];
    if (input.signup === 'domains' && domains.length === 0) throw errors.invalidRequest('signup_domains: name at least one domain when signup is "domains"');
    const now = this.deps.clock.now();
    const policy: SigninPolicyRecord = {
      signup: input.signup,
      signupDomains: domains,
      passwordless: [...new Set(input.passwordless)],
      requireVerifiedEmail: input.require_verified_email,
      updatedAt: now,
    };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      await reposOf(this.deps, trx).signinPolicies.put(tenantId, { ...policy, updatedAt: now });
      await this.deps.events.record(trx, {
        tenantId,
        type: 'signin_policy.updated',
        organizationId: null,
        actor,
        data: {
          signup: policy.signup,
          signup_domains: policy.signupDomains,
          passwordless: policy.passwordless,
          require_verified_email: policy.requireVerifiedEmail,
        },
      });
    });
    this.#cache.delete(tenantId);
    return view(policy);
  }
}
