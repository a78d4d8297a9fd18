import type { Actor } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import { CREATED_KEY_ALGS, type Keystore, type SigningAlg } from '../kernel/crypto/keystore.js';
import { newId } from '../kernel/ids.js';
import { checkTenantAddress, normalizeHost, TenantInputError } from '../kernel/tenancy.js';
import { newSetupToken } from '../console/service.js';
import { mintApiKey } from '../management/api-keys/service.js';
import { PERMISSIONS } from '../management/permissions.js';
import { type Db, isUniqueViolation } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import type { TenantRecord, TenantRepo } from '../storage/repos/tenants.js';

export interface CreatedTenant {
  tenant: TenantRecord;
  platformApiKey: string;
  /** The one-time console setup link's token (docs/console.md): shown once, 24 hours. */
  setupToken: string;
}

/** Tenant administration: used by the CLI and by the first-start bootstrap. */
export class TenantService {
  private readonly tenants: TenantRepo;

  constructor(
    private readonly db: Db,
    private readonly keystore: Keystore,
    private readonly clock: Clock,
    private readonly keyOverlapMs: number,
    private readonly events: EventRecorder,
  ) {
    this.tenants = repos(db.kysely, db.dialect).tenants;
  }

  /**
   * Creates a tenant with its Ed25519 signing key (its RSA-2048 key is made at first use:
   * Keystore.ensureDefaultKeys), one platform-bound API key holding every permission and a console
   * setup link for its first administrator, all in one transaction.
   */
  async create(input: { host: string; issuer?: string }): Promise<CreatedTenant> {
    const { host, issuer } = checkTenantAddress(input.host, input.issuer);
    const now = this.clock.now();
    const tenant: TenantRecord = { id: newId('ten', now), host, issuer, createdAt: now };
    const keys = await Promise.all(CREATED_KEY_ALGS.map((alg) => this.keystore.generate(tenant.id, alg)));
    try {
      return await this.db.kysely.transaction().execute(async (trx) => {
        const r = repos(trx, this.db.dialect);
        await r.tenants.insert(tenant);
        for (const key of keys) await r.signingKeys.rotate(key, this.keyOverlapMs, trx);
        await r.roles.seedDefaults(tenant.id, now, (t) => newId('rol', t));
        const minted = await mintApiKey(r.apiKeys, this.clock, {
          tenantId: tenant.id,
          organizationId: null,
          name: 'platform (created with the tenant)',
          scopes: PERMISSIONS,
        });
        const setup = newSetupToken(tenant.id, now);
        await r.consoleSetupTokens.insert(setup.record);
        return { tenant, platformApiKey: minted.key, setupToken: setup.token };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new TenantInputError(`a tenant already serves host ${host}`);
      throw err;
    }
  }

  /**
   * Changes a tenant's host and/or issuer (`keyhall tenant update`). A new host without an
   * issuer takes the default issuer of that host. Records `tenant.updated` in the tenant's feed
   * and tells this instance's resolver at once (others see it within KEYHALL_CACHE_TTL_MS).
   */
  async update(tenantId: string, input: { host?: string; issuer?: string }, actor: Actor = { type: 'system', id: null }): Promise<TenantRecord> {
    const current = await this.tenants.findById(tenantId);
    if (!current) throw new TenantInputError(`no tenant ${tenantId}`);
    const { host, issuer } = checkTenantAddress(input.host ?? current.host, input.issuer ?? (input.host === undefined ? current.issuer : undefined));
    try {
      await this.events.transaction(this.db.kysely, async (trx) => {
        const r = repos(trx, this.db.dialect);
        if (!(await r.tenants.update(tenantId, { host, issuer }))) throw new TenantInputError(`no tenant ${tenantId}`);
        await this.events.record(trx, {
          tenantId,
          type: 'tenant.updated',
          organizationId: null,
          actor,
          data: { host, issuer, previous_host: current.host, previous_issuer: current.issuer },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new TenantInputError(`a tenant already serves host ${host}`);
      throw err;
    }
    this.#changed(tenantId);
    return { ...current, host, issuer };
  }

  /**
   * Deletes a tenant with all of its data, in one transaction (`keyhall tenant delete --yes`).
   * Its event feed goes with it: the caller logs the deletion to the process log.
   */
  async delete(tenantId: string): Promise<TenantRecord> {
    const current = await this.tenants.findById(tenantId);
    if (!current) throw new TenantInputError(`no tenant ${tenantId}`);
    await this.db.kysely.transaction().execute((trx) => repos(trx, this.db.dialect).tenants.deleteWithData(tenantId));
    this.keystore.invalidate(tenantId);
    this.#changed(tenantId);
    return current;
  }

  readonly #listeners: Array<(tenantId: string) => void> = [];

  /** Called after a tenant's host or issuer changed, or the tenant was deleted (cache invalidation). */
  onChanged(listener: (tenantId: string) => void): void {
    this.#listeners.push(listener);
  }

  #changed(tenantId: string): void {
    for (const l of this.#listeners) l(tenantId);
  }

  list(): Promise<TenantRecord[]> {
    return this.tenants.list();
  }

  count(): Promise<number> {
    return this.tenants.count();
  }

  /** Finds a tenant by id (`ten_…`) or by host. */
  async find(idOrHost: string): Promise<TenantRecord | undefined> {
    if (idOrHost.startsWith('ten_')) return this.tenants.findById(idOrHost);
    const host = normalizeHost(idOrHost);
    return host ? this.tenants.findByHost(host) : undefined;
  }

  /**
   * Adds new active keys; the previous ones stay published for the configured overlap. Each
   * rotated algorithm records a `signing_key.rotated` event in the rotation's transaction (the
   * CLI rotates as the `system` actor).
   */
  async rotateKeys(tenantId: string, only?: readonly SigningAlg[], actor: Actor = { type: 'system', id: null }): Promise<string[]> {
    // Default: every algorithm the tenant holds a key for.
    const algs = only ?? (await this.keystore.activeAlgs(tenantId));
    const keys = await Promise.all(algs.map((alg) => this.keystore.generate(tenantId, alg)));
    await this.events.transaction(this.db.kysely, async (trx) => {
      const { signingKeys: repo } = repos(trx, this.db.dialect);
      for (const key of keys) {
        const retiredKid = await repo.rotate(key, this.keyOverlapMs, trx);
        await this.events.record(trx, {
          tenantId,
          type: 'signing_key.rotated',
          organizationId: null,
          actor,
          data: { kid: key.kid, alg: key.alg, retired_kid: retiredKid },
        });
      }
    });
    this.keystore.invalidate(tenantId);
    return keys.map((k) => k.kid);
  }

  /**
   * Adds a key for each algorithm the tenant does not hold yet (a resource server chose it),
   * recorded as a `signing_key.rotated` event with no retired key.
   */
  async ensureKeys(tenantId: string, algs: readonly SigningAlg[], actor: Actor = { type: 'system', id: null }): Promise<void> {
    const held = await this.keystore.activeAlgs(tenantId);
    const missing = algs.filter((alg) => !held.includes(alg));
    if (missing.length > 0) await this.rotateKeys(tenantId, missing, actor);
  }
}
