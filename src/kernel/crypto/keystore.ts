import { performance } from 'node:perf_hooks';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Clock } from '../clock.js';
import { Lru } from '../lru.js';
import type { Envelope } from './envelope.js';

/**
 * Signing algorithms a tenant may hold keys for: EdDSA (access tokens by default), RS256 (ID
 * tokens, and access tokens for resource servers that ask for it), ES256 and PS256 (access
 * tokens for resource servers that ask for them). One key per algorithm.
 */
export const SIGNING_ALGS = ['EdDSA', 'ES256', 'RS256', 'PS256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];
/**
 * The keys every tenant publishes: EdDSA (access tokens) and RS256 (ID tokens). The others are
 * added when a resource server uses them.
 */
export const TENANT_KEY_ALGS: readonly SigningAlg[] = ['EdDSA', 'RS256'];
/**
 * The keys a tenant is created with. Its RS256 key is made at its first use (the first JWKS read,
 * ID token or credential metadata): an RSA-2048 key costs about 100 ms of CPU to make, an Ed25519
 * key 0.1 ms, so a tenant that never signs in a person (machine clients only) never pays for one,
 * and creating 10,000 tenants takes seconds (docs/performance.md).
 */
export const CREATED_KEY_ALGS: readonly SigningAlg[] = ['EdDSA'];
const ON_FIRST_USE: readonly SigningAlg[] = TENANT_KEY_ALGS.filter((alg) => !CREATED_KEY_ALGS.includes(alg));
export const isSigningAlg = (alg: string): alg is SigningAlg => (SIGNING_ALGS as readonly string[]).includes(alg);

export interface StoredSigningKey {
  kid: string;
  tenantId: string;
  alg: string;
  status: 'active' | 'retired';
  publicJwk: string;
  privateJwkEnc: string;
  createdAt: number;
  retiredAt: number | null;
  expiresAt: number | null;
}

/** The storage the keystore needs (implemented by storage/repos/signing-keys.ts). */
export interface SigningKeyStore {
  listPublished(tenantId: string, now: number): Promise<StoredSigningKey[]>;
  /** Stores an active key unless the tenant already holds an active key of its algorithm (atomically). */
  insertIfNoActive(key: StoredSigningKey): Promise<void>;
}

export interface ActiveKey {
  kid: string;
  alg: SigningAlg;
  privateKey: Awaited<ReturnType<typeof importJWK>>;
}

interface CacheEntry {
  loadedAt: number;
  keys: Promise<StoredSigningKey[]>;
  active: Map<string, Promise<ActiveKey>>;
}

const encryptionContext = (tenantId: string, kid: string) => `signing_key:${tenantId}:${kid}`;

/**
 * Per-tenant signing keys. Private keys are envelope-encrypted at rest and decrypted only when
 * used. Each instance caches a tenant's keys for `cacheTtlMs`, so a rotation made by another
 * process (the CLI, another instance) is picked up within that time without a restart.
 */
export class Keystore {
  readonly #cache: Lru<string, CacheEntry>;
  /** Imported private keys by tenant, kid and algorithm (a kid names one key pair for good). */
  readonly #imported: Lru<string, ActiveKey['privateKey']>;
  /** Default keys being made for a tenant (one generation per tenant in this instance at a time). */
  readonly #adding = new Map<string, Promise<void>>();

  constructor(
    private readonly store: SigningKeyStore,
    private readonly envelope: Envelope,
    private readonly clock: Clock,
    private readonly cacheTtlMs: number,
    maxTenants = 10_000,
  ) {
    this.#cache = new Lru(maxTenants);
    this.#imported = new Lru(maxTenants * SIGNING_ALGS.length);
  }

  /** Generates a new key pair for a tenant, ready to be stored. */
  async generate(tenantId: string, alg: SigningAlg): Promise<StoredSigningKey> {
    const { publicKey, privateKey } =
      alg === 'EdDSA'
        ? await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })
        : alg === 'ES256'
          ? await generateKeyPair('ES256', { extractable: true })
          : await generateKeyPair(alg, { modulusLength: 2048, extractable: true });
    const pub = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(pub);
    const publicJwk: JWK = { ...pub, kid, alg, use: 'sig' };
    const privateJwk = await exportJWK(privateKey);
    return {
      kid,
      tenantId,
      alg,
      status: 'active',
      publicJwk: JSON.stringify(publicJwk),
      privateJwkEnc: this.envelope.encrypt(JSON.stringify(privateJwk), encryptionContext(tenantId, kid)),
      createdAt: this.clock.now(),
      retiredAt: null,
      expiresAt: null,
    };
  }

  /**
   * The tenant's JWKS: public members only, active and still-overlapping retired keys. It always
   * holds every default key (TENANT_KEY_ALGS): one not made yet is made first, so no instance ever
   * publishes a JWKS without a key another instance may already sign with.
   */
  async jwks(tenantId: string): Promise<{ keys: JWK[] }> {
    await this.ensureDefaultKeys(tenantId);
    const keys = await this.#entry(tenantId).keys;
    const now = this.clock.now();
    return {
      keys: keys.filter((k) => k.status === 'active' || (k.expiresAt ?? 0) > now).map((k) => JSON.parse(k.publicJwk) as JWK),
    };
  }

  /** The newest active key of an algorithm, with its private key imported. */
  async activeKey(tenantId: string, alg: SigningAlg): Promise<ActiveKey> {
    const entry = this.#entry(tenantId);
    let active = entry.active.get(alg);
    if (!active) {
      active = this.#loadActive(entry, tenantId, alg);
      entry.active.set(alg, active);
      active.catch(() => entry.active.delete(alg));
    }
    return active;
  }

  /** The algorithms the tenant holds an active key for (in SIGNING_ALGS order). */
  async activeAlgs(tenantId: string): Promise<SigningAlg[]> {
    const keys = await this.store.listPublished(tenantId, this.clock.now());
    return SIGNING_ALGS.filter((alg) => keys.some((k) => k.alg === alg && k.status === 'active'));
  }

  /**
   * Makes the default keys the tenant does not hold yet (its RS256 key, at first use). Instances
   * racing to make one each store theirs only if none is active (SigningKeyStore.insertIfNoActive),
   * then all read the one that won.
   */
  async ensureDefaultKeys(tenantId: string): Promise<void> {
    const keys = await this.#entry(tenantId).keys;
    const missing = ON_FIRST_USE.filter((alg) => !keys.some((k) => k.alg === alg && k.status === 'active'));
    if (missing.length > 0) await this.#addDefaults(tenantId, missing);
  }

  #addDefaults(tenantId: string, algs: readonly SigningAlg[]): Promise<void> {
    let adding = this.#adding.get(tenantId);
    if (!adding) {
      adding = (async () => {
        const fresh = await Promise.all(algs.map((alg) => this.generate(tenantId, alg)));
        for (const key of fresh) await this.store.insertIfNoActive(key);
      })().finally(() => {
        this.#adding.delete(tenantId);
        // Read the keys again now, in the exchange that made one, not in the next one.
        this.invalidate(tenantId);
        this.#entry(tenantId);
      });
      this.#adding.set(tenantId, adding);
    }
    return adding;
  }

  /** Drops this instance's cached keys of a tenant (after a local rotation). */
  invalidate(tenantId: string): void {
    this.#cache.delete(tenantId);
  }

  async #loadActive(entry: CacheEntry, tenantId: string, alg: SigningAlg): Promise<ActiveKey> {
    let key = (await entry.keys).find((k) => k.alg === alg && k.status === 'active');
    // A key another instance just added (a resource server's new algorithm): look once more.
    if (!key) key = (await this.store.listPublished(tenantId, this.clock.now())).find((k) => k.alg === alg && k.status === 'active');
    // A default key not made yet (RS256 before the tenant's first ID token): make it now.
    if (!key && ON_FIRST_USE.includes(alg)) {
      await this.#addDefaults(tenantId, [alg]);
      key = (await this.#entry(tenantId).keys).find((k) => k.alg === alg && k.status === 'active');
    }
    if (!key) throw new Error(`tenant ${tenantId} has no active ${alg} key`);
    // The key list is re-read every TTL; a key it still holds is not decrypted and imported again.
    const importedAs = `${tenantId}\u0000${key.kid}\u0000${alg}`;
    let privateKey = this.#imported.get(importedAs);
    if (!privateKey) {
      const jwk = JSON.parse(this.envelope.decrypt(key.privateJwkEnc, encryptionContext(tenantId, key.kid))) as JWK;
      privateKey = await importJWK(jwk, alg);
      this.#imported.set(importedAs, privateKey);
    }
    return { kid: key.kid, alg, privateKey };
  }

  #entry(tenantId: string): CacheEntry {
    const now = performance.now();
    let entry = this.#cache.get(tenantId);
    if (!entry || now - entry.loadedAt >= this.cacheTtlMs) {
      const keys = this.store.listPublished(tenantId, this.clock.now());
      const fresh: CacheEntry = { loadedAt: now, keys, active: new Map() };
      keys.catch(() => {
        if (this.#cache.get(tenantId) === fresh) this.#cache.delete(tenantId);
      });
      this.#cache.set(tenantId, fresh);
      entry = fresh;
    }
    return entry;
  }
}
