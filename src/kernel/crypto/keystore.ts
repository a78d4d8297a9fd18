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
/** The keys a tenant is created with; the others are added when a resource server uses them. */
export const TENANT_KEY_ALGS: readonly SigningAlg[] = ['EdDSA', 'RS256'];
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

  /** The tenant's JWKS: public members only, active and still-overlapping retired keys. */
  async jwks(tenantId: string): Promise<{ keys: JWK[] }> {
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

  /** Drops this instance's cached keys of a tenant (after a local rotation). */
  invalidate(tenantId: string): void {
    this.#cache.delete(tenantId);
  }

  async #loadActive(entry: CacheEntry, tenantId: string, alg: SigningAlg): Promise<ActiveKey> {
    let key = (await entry.keys).find((k) => k.alg === alg && k.status === 'active');
    // A key another instance just added (a resource server's new algorithm): look once more.
    if (!key) key = (await this.store.listPublished(tenantId, this.clock.now())).find((k) => k.alg === alg && k.status === 'active');
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
