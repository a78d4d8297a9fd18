/**
 * The credential issuer's rules and state (docs/credentials.md): credential types, offers and
 * their pre-authorized codes, proof nonces, issuance with a status-list slot, revocation, and the
 * signed status lists. Audited writes commit with their events (EventRecorder transactions).
 */
import { randomInt } from 'node:crypto';
import type { JWK } from 'jose';
import type { Actor } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { Envelope } from '../kernel/crypto/envelope.js';
import { safeEqual, sha256Hex } from '../kernel/crypto/hash.js';
import { AppError, errors } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { PreAuthorizedCodes, RedeemOutcome } from '../oauth/token/grants/pre-authorized-code.js';
import type { KeySource } from '../oauth/tokens/access-token.js';
import { GRANT_TYPE } from '../oauth/types.js';
import type { Db, Dialect, Executor } from '../storage/db.js';
import { type Repos, repos } from '../storage/repos/index.js';
import {
  credentialIssuerMetadata,
  FORMAT,
  issueSdJwtVc,
  jwtVcIssuerMetadata,
  MEMBERSHIP_TYPE,
  membershipType,
  OFFER_PATH,
  ProofError,
  randomToken,
  STATUS_LIST_PATH,
  statusListToken,
  verifyProof,
} from './protocol.js';
import type { ClaimSpec, CredentialOfferRecord, CredentialTypeRecord, IssuedCredentialRecord, TxCodeInputMode } from './types.js';

/** OID4VCI credential-endpoint errors (§8.3.1.2), all 400. */
export const credentialErrors = {
  invalidCredentialRequest: (d: string) => new AppError(400, 'invalid_credential_request', d),
  unknownCredentialConfiguration: (d: string) => new AppError(400, 'unknown_credential_configuration', d),
  invalidProof: (d: string) => new AppError(400, 'invalid_proof', d),
  invalidNonce: (d: string) => new AppError(400, 'invalid_nonce', d),
  credentialRequestDenied: (d: string) => new AppError(400, 'credential_request_denied', d),
};

export interface CredentialSettings {
  offerTtlSeconds: number;
  nonceTtlSeconds: number;
  /** The status list token's `ttl` (how long a verifier may cache it). */
  statusListTtlSeconds: number;
  /** Entries per status list (at least 16,384). */
  statusListSize: number;
}

/** Entries per status list: 16,384 (2 KiB of bits), so a random index hides issue order and volume. */
export const STATUS_LIST_SIZE = 16_384;

/** Wrong tx_code attempts after which the pre-authorized code dies. */
export const MAX_TX_CODE_ATTEMPTS = 5;
/** A list takes new credentials until half its slots are used, so a random pick rarely collides. */
const OPEN_FRACTION = 0.5;
/** Random picks before a new list is opened. */
const SLOT_TRIES = 32;
/** Signed status lists are valid for a day and re-signed an hour before they expire (or when a bit changes). */
const STATUS_LIST_EXP_SECONDS = 24 * 3600;
const STATUS_LIST_RESIGN_MARGIN_S = 3600;
const CODE_CONTEXT = (tenantId: string, offerId: string) => `credential_offer:${tenantId}:${offerId}`;

export interface CredentialDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  envelope: Envelope;
  keys: KeySource;
  settings: CredentialSettings;
}

export interface IssuerTenant {
  id: string;
  issuer: string;
  name: string;
}

export type OfferSubject = { user_id: string; claims?: undefined } | { claims: Record<string, unknown>; user_id?: undefined };

export interface NewOffer {
  credential_configuration_id: string;
  subject: OfferSubject;
  tx_code?: { length: number; input_mode: TxCodeInputMode } | undefined;
}

const TEXT_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

function newTxCode(length: number, mode: TxCodeInputMode): string {
  const alphabet = mode === 'numeric' ? '0123456789' : TEXT_ALPHABET;
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

function checkClaims(claims: Record<string, unknown>, spec: Record<string, ClaimSpec>): void {
  for (const [name, value] of Object.entries(claims)) {
    const s = spec[name];
    if (!s) throw errors.invalidRequest(`subject.claims.${name}: not a claim of this credential type`);
    if (typeof value !== s.type) throw errors.invalidRequest(`subject.claims.${name}: must be a ${s.type}`);
  }
  for (const [name, s] of Object.entries(spec)) if (s.mandatory && !(name in claims)) throw errors.invalidRequest(`subject.claims.${name}: required`);
}

export const statusListUri = (issuer: string, listId: string) => `${issuer}${STATUS_LIST_PATH}/${listId}`;

export class CredentialService implements PreAuthorizedCodes {
  constructor(private readonly deps: CredentialDeps) {}

  get settings(): CredentialSettings {
    return this.deps.settings;
  }

  private r(trx?: Executor): Repos {
    return repos(trx ?? this.deps.db.kysely, this.deps.db.dialect);
  }

  private transaction<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.deps.events.transaction(this.deps.db.kysely, fn);
  }

  // --- credential types -------------------------------------------------------------------

  async listTypes(tenantId: string): Promise<CredentialTypeRecord[]> {
    return [membershipType(tenantId), ...(await this.r().credentialTypes.list(tenantId))];
  }

  async findType(tenantId: string, id: string): Promise<CredentialTypeRecord | undefined> {
    if (id === MEMBERSHIP_TYPE) return membershipType(tenantId);
    return this.r().credentialTypes.find(tenantId, id);
  }

  async createType(
    tenantId: string,
    actor: Actor,
    input: { id: string; vct: string; display_name: string; claims: Record<string, ClaimSpec>; lifetime_seconds: number },
  ): Promise<CredentialTypeRecord> {
    if (input.id === MEMBERSHIP_TYPE) throw errors.conflict(`id: ${MEMBERSHIP_TYPE} is built in`);
    const t: CredentialTypeRecord = {
      tenantId,
      id: input.id,
      vct: input.vct,
      displayName: input.display_name,
      claims: input.claims,
      lifetimeSeconds: input.lifetime_seconds,
      createdAt: this.deps.clock.now(),
    };
    await this.transaction(async (trx) => {
      if (!(await this.r(trx).credentialTypes.insert(t))) throw errors.conflict('id: a credential type with this id exists');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'credential_type.created',
        organizationId: null,
        actor,
        data: { credential_configuration_id: t.id, vct: t.vct },
      });
    });
    return t;
  }

  async deleteType(tenantId: string, actor: Actor, id: string): Promise<void> {
    if (id === MEMBERSHIP_TYPE) throw errors.invalidRequest(`${MEMBERSHIP_TYPE} is built in and cannot be deleted`);
    await this.transaction(async (trx) => {
      if (!(await this.r(trx).credentialTypes.delete(tenantId, id))) throw errors.notFound('credential type not found');
      await this.deps.events.record(trx, { tenantId, type: 'credential_type.deleted', organizationId: null, actor, data: { credential_configuration_id: id } });
    });
  }

  // --- metadata ---------------------------------------------------------------------------

  async issuerMetadata(tenant: IssuerTenant) {
    return credentialIssuerMetadata(tenant.issuer, tenant.name, await this.listTypes(tenant.id));
  }

  async jwtVcIssuer(tenant: IssuerTenant) {
    // The published keys include every default key (made at first use), as the tenant's JWKS does.
    await this.deps.keys.jwks(tenant.id);
    const keys = await this.r().signingKeys.listForCredentials(tenant.id, this.deps.clock.now());
    return jwtVcIssuerMetadata(tenant.issuer, { keys: keys.map((k) => JSON.parse(k.publicJwk) as JWK) });
  }

  // --- offers -----------------------------------------------------------------------------

  async createOffer(tenant: IssuerTenant, actor: Actor, orgId: string, input: NewOffer) {
    const now = this.deps.clock.now();
    const type = await this.findType(tenant.id, input.credential_configuration_id);
    if (!type) throw errors.invalidRequest('credential_configuration_id: no such credential type');
    const code = randomToken();
    const ref = randomToken();
    const txCode = input.tx_code ? newTxCode(input.tx_code.length, input.tx_code.input_mode) : null;
    const id = newId('offer', now);
    const offer: CredentialOfferRecord = {
      id,
      tenantId: tenant.id,
      organizationId: orgId,
      configurationId: type.id,
      userId: input.subject.user_id ?? null,
      claims: input.subject.claims ?? null,
      codeHash: sha256Hex(code),
      codeEnc: this.deps.envelope.encrypt(code, CODE_CONTEXT(tenant.id, id)),
      refHash: sha256Hex(ref),
      txCodeHash: txCode === null ? null : sha256Hex(txCode),
      txCodeLength: input.tx_code?.length ?? null,
      txCodeInputMode: input.tx_code?.input_mode ?? null,
      failedAttempts: 0,
      state: 'pending',
      expiresAt: now + this.deps.settings.offerTtlSeconds * 1000,
      createdAt: now,
      redeemedAt: null,
    };
    await this.transaction(async (trx) => {
      const r = this.r(trx);
      if (!(await r.organizations.findShared(tenant.id, orgId, this.deps.db.dialect))) throw errors.notFound('organization not found');
      if (type.id === MEMBERSHIP_TYPE) {
        if (input.subject.user_id === undefined) throw errors.invalidRequest(`subject.user_id: an ${MEMBERSHIP_TYPE} offer is for a member`);
        if (!(await r.members.find(tenant.id, orgId, input.subject.user_id))) throw errors.invalidRequest('subject.user_id: not a member of this organization');
      } else {
        if (input.subject.claims === undefined) throw errors.invalidRequest('subject.claims: this credential type takes its claims in the offer');
        checkClaims(input.subject.claims, type.claims);
      }
      await r.credentialOffers.insert(offer);
      await this.deps.events.record(trx, {
        tenantId: tenant.id,
        type: 'credential.offer.created',
        organizationId: orgId,
        actor,
        data: { offer_id: id, credential_configuration_id: type.id, user_id: offer.userId, expires_at: new Date(offer.expiresAt).toISOString() },
      });
    });
    const offerUri = `${tenant.issuer}${OFFER_PATH}/${ref}`;
    return {
      offer,
      credentialOffer: this.offerDocument(tenant.issuer, offer, code),
      credentialOfferUri: offerUri,
      txCode,
    };
  }

  private offerDocument(issuer: string, offer: CredentialOfferRecord, code: string) {
    const txCode =
      offer.txCodeLength === null
        ? {}
        : { tx_code: { length: offer.txCodeLength, input_mode: offer.txCodeInputMode, description: 'The code you were given with this offer' } };
    return {
      credential_issuer: issuer,
      credential_configuration_ids: [offer.configurationId],
      grants: { [GRANT_TYPE.preAuthorizedCode]: { 'pre-authorized_code': code, ...txCode } },
    };
  }

  /** The offer by reference (while it can still be redeemed). */
  async offerByReference(tenant: IssuerTenant, ref: string) {
    const offer = await this.r().credentialOffers.findByRef(tenant.id, sha256Hex(ref));
    if (!offer || offer.state !== 'pending' || offer.expiresAt <= this.deps.clock.now())
      throw errors.notFound('no such credential offer, or it was used or has expired');
    return this.offerDocument(tenant.issuer, offer, this.deps.envelope.decrypt(offer.codeEnc, CODE_CONTEXT(tenant.id, offer.id)));
  }

  /**
   * Records `credential.offer.expired` for offers that died unredeemed and that nobody presented
   * again (run periodically by every instance: the kill is a compare-and-set, so each offer's
   * event is recorded once). Returns how many offers it looked at.
   */
  async expireDue(limit = 100): Promise<number> {
    const due = await this.r().credentialOffers.duePending(this.deps.clock.now(), limit);
    for (const offer of due) await this.expire(offer, 'expired');
    return due.length;
  }

  private async expire(offer: CredentialOfferRecord, reason: 'expired' | 'tx_code_attempts', alreadyDead = false): Promise<void> {
    await this.transaction(async (trx) => {
      if (!alreadyDead && !(await this.r(trx).credentialOffers.kill(offer.tenantId, offer.id))) return;
      await this.deps.events.record(trx, {
        tenantId: offer.tenantId,
        type: 'credential.offer.expired',
        organizationId: offer.organizationId,
        actor: { type: 'system', id: null },
        data: { offer_id: offer.id, credential_configuration_id: offer.configurationId, reason },
      });
    });
  }

  /** The pre-authorized code grant's port (oauth/token/grants/pre-authorized-code.ts). */
  async redeem(tenantId: string, code: string, txCode: string | undefined, now: number): Promise<RedeemOutcome> {
    const offers = this.r().credentialOffers;
    const offer = await offers.findByCode(tenantId, sha256Hex(code));
    if (!offer) return { ok: false, reason: 'unknown' };
    if (offer.state === 'redeemed' || offer.state === 'issued') return { ok: false, reason: 'used' };
    if (offer.state === 'dead') return { ok: false, reason: offer.failedAttempts >= MAX_TX_CODE_ATTEMPTS ? 'tx_code_exhausted' : 'expired' };
    if (offer.expiresAt <= now) {
      await this.expire(offer, 'expired');
      return { ok: false, reason: 'expired' };
    }
    if (offer.txCodeHash === null && txCode !== undefined) return { ok: false, reason: 'tx_code_unexpected' };
    if (offer.txCodeHash !== null) {
      if (txCode === undefined) return { ok: false, reason: 'tx_code_missing' };
      if (!safeEqual(sha256Hex(txCode), offer.txCodeHash)) {
        const after = await offers.countFailure(tenantId, offer.id, MAX_TX_CODE_ATTEMPTS);
        if (!after) return { ok: false, reason: 'used' };
        if (after.state !== 'dead') return { ok: false, reason: 'tx_code_wrong' };
        await this.expire(after, 'tx_code_attempts', true);
        return { ok: false, reason: 'tx_code_exhausted' };
      }
    }
    if (!(await offers.redeem(tenantId, offer.id, now))) return { ok: false, reason: 'used' };
    return { ok: true, offerId: offer.id, subject: offer.userId ?? offer.id };
  }

  // --- nonces -----------------------------------------------------------------------------

  async newNonce(tenantId: string) {
    const now = this.deps.clock.now();
    const nonce = randomToken();
    await this.r().credentialNonces.insert(tenantId, sha256Hex(nonce), now + this.deps.settings.nonceTtlSeconds * 1000, now);
    return { c_nonce: nonce, c_nonce_expires_in: this.deps.settings.nonceTtlSeconds };
  }

  // --- issuance ---------------------------------------------------------------------------

  private parseRequest(body: unknown): { configurationId: string; proof: string } {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw credentialErrors.invalidCredentialRequest('the request body must be a JSON object');
    const b = body as Record<string, unknown>;
    if (b.credential_identifier !== undefined)
      throw credentialErrors.invalidCredentialRequest('credential_identifier is not supported; send credential_configuration_id');
    if (typeof b.credential_configuration_id !== 'string') throw credentialErrors.invalidCredentialRequest('missing credential_configuration_id');
    if (b.proof !== undefined) throw credentialErrors.invalidCredentialRequest('send proofs (OID4VCI 1.0), not proof');
    if (b.credential_response_encryption !== undefined) throw credentialErrors.invalidCredentialRequest('credential response encryption is not supported');
    const proofs = b.proofs;
    if (proofs === undefined) throw credentialErrors.invalidProof('proofs is required: the credential is bound to a holder key');
    if (typeof proofs !== 'object' || proofs === null || Array.isArray(proofs)) throw credentialErrors.invalidCredentialRequest('proofs must be an object');
    const p = proofs as Record<string, unknown>;
    const types = Object.keys(p);
    if (types.length !== 1 || types[0] !== 'jwt') throw credentialErrors.invalidCredentialRequest('proofs must carry exactly one proof type, jwt');
    const jwts = p.jwt;
    if (!Array.isArray(jwts) || jwts.length === 0 || !jwts.every((j) => typeof j === 'string'))
      throw credentialErrors.invalidCredentialRequest('proofs.jwt must be a non-empty array of JWTs');
    if (jwts.length > 1) throw credentialErrors.invalidCredentialRequest('batch issuance is not supported: send one proof');
    return { configurationId: b.credential_configuration_id, proof: jwts[0] as string };
  }

  private async claimsFor(offer: CredentialOfferRecord): Promise<Record<string, unknown>> {
    if (offer.configurationId !== MEMBERSHIP_TYPE) return offer.claims ?? {};
    const r = this.r();
    const [org, member, user] = await Promise.all([
      r.organizations.find(offer.tenantId, offer.organizationId),
      r.members.find(offer.tenantId, offer.organizationId, offer.userId!),
      r.users.find(offer.tenantId, offer.userId!),
    ]);
    if (!org || !member || !user) throw credentialErrors.credentialRequestDenied('the membership this offer was made for no longer exists');
    return { organization_id: org.id, organization_name: org.name, role: member.role, email: user.email };
  }

  /** POST /credentials/credential: the token's offer, one proof → one dc+sd-jwt. */
  async issue(tenant: IssuerTenant, offerId: string, body: unknown) {
    const now = this.deps.clock.now();
    const { configurationId, proof } = this.parseRequest(body);
    const type = await this.findType(tenant.id, configurationId);
    if (!type) throw credentialErrors.unknownCredentialConfiguration(`unknown credential_configuration_id ${JSON.stringify(configurationId)}`);
    const offer = await this.r().credentialOffers.find(tenant.id, offerId);
    if (!offer) throw credentialErrors.credentialRequestDenied('the offer of this access token no longer exists');
    if (offer.configurationId !== configurationId)
      throw credentialErrors.invalidCredentialRequest('the access token does not cover this credential configuration');
    if (offer.state === 'issued') throw credentialErrors.invalidCredentialRequest('the credential of this offer was already issued');
    if (offer.state !== 'redeemed') throw credentialErrors.credentialRequestDenied('this offer was withdrawn');

    let holder;
    try {
      holder = await verifyProof(proof, tenant.issuer, now, this.deps.settings.nonceTtlSeconds);
    } catch (err) {
      if (err instanceof ProofError) throw credentialErrors.invalidProof(err.message);
      throw err;
    }
    if (holder.nonce === undefined) throw credentialErrors.invalidNonce('the proof carries no nonce; get one from the nonce endpoint');
    if (!(await this.r().credentialNonces.consume(tenant.id, sha256Hex(holder.nonce), now)))
      throw credentialErrors.invalidNonce('the nonce is unknown, used or expired; get a fresh one from the nonce endpoint');
    const claims = await this.claimsFor(offer);

    const key = await this.deps.keys.activeKey(tenant.id, 'EdDSA');
    const credential = await this.transaction(async (trx) => {
      const r = this.r(trx);
      // First (the lock order of a member removal: membership, offers, status lists): a removal
      // either committed (no row: refused) or waits for this transaction and then revokes what
      // it issued.
      if (type.id === MEMBERSHIP_TYPE && !(await r.members.findShared(tenant.id, offer.organizationId, offer.userId!, this.deps.db.dialect))) {
        throw credentialErrors.credentialRequestDenied('the membership this offer was made for no longer exists');
      }
      if (!(await r.credentialOffers.markIssued(tenant.id, offer.id))) {
        const current = await r.credentialOffers.find(tenant.id, offer.id);
        if (current?.state === 'issued') throw credentialErrors.invalidCredentialRequest('the credential of this offer was already issued');
        throw credentialErrors.credentialRequestDenied('this offer was withdrawn');
      }
      const record = await this.allocate(trx, tenant, offer, type, holder.did, now);
      // The key stays in jwt-vc-issuer until this credential expires, rotations notwithstanding.
      await r.signingKeys.publishUntil(key.kid, record.expiresAt);
      const vc = await issueSdJwtVc(
        {
          issuer: tenant.issuer,
          vct: type.vct,
          claims,
          holder: holder.jwk,
          status: { idx: record.statusIndex, uri: record.statusUri },
          iat: Math.floor(now / 1000),
          exp: Math.floor(record.expiresAt / 1000),
        },
        key,
      );
      await this.deps.events.record(trx, {
        tenantId: tenant.id,
        type: 'credential.issued',
        organizationId: offer.organizationId,
        actor: { type: 'system', id: null },
        data: { vc_id: record.id, type: type.id, format: FORMAT, subject: holder.did },
      });
      return vc;
    });
    return { credentials: [{ credential }] };
  }

  /** Inserts the credential record in a random free slot of an open status list (a new list when none has room). */
  private async allocate(
    trx: Executor,
    tenant: IssuerTenant,
    offer: CredentialOfferRecord,
    type: CredentialTypeRecord,
    subject: string,
    now: number,
  ): Promise<IssuedCredentialRecord> {
    const r = this.r(trx);
    const size = this.deps.settings.statusListSize;
    const id = newId('vc', now);
    for (;;) {
      let list = await r.statusLists.findOpen(tenant.id, Math.floor(size * OPEN_FRACTION));
      if (!list) {
        list = {
          id: newId('sl', now),
          tenantId: tenant.id,
          size,
          allocated: 0,
          version: 0,
          signedJwt: null,
          signedVersion: null,
          signedUntil: null,
          createdAt: now,
        };
        await r.statusLists.insert(list);
      }
      for (let i = 0; i < SLOT_TRIES; i++) {
        const record: IssuedCredentialRecord = {
          id,
          tenantId: tenant.id,
          organizationId: offer.organizationId,
          offerId: offer.id,
          configurationId: type.id,
          vct: type.vct,
          format: FORMAT,
          subject,
          userId: offer.userId,
          status: 'valid',
          statusListId: list.id,
          statusIndex: randomInt(list.size),
          statusUri: statusListUri(tenant.issuer, list.id),
          issuedAt: now,
          expiresAt: now + type.lifetimeSeconds * 1000,
          revokedAt: null,
        };
        if (await r.credentials.insert(record)) {
          await r.statusLists.countAllocation(list.id);
          return record;
        }
      }
      // This list is crowded: count it full so the next pick opens another.
      await r.statusLists.markFull(list.id);
    }
  }

  // --- revocation -------------------------------------------------------------------------

  async list(tenantId: string, orgId: string, after: string | undefined, limit: number) {
    if (!(await this.r().organizations.find(tenantId, orgId))) throw errors.notFound('organization not found');
    return this.r().credentials.list(tenantId, orgId, { after, limit });
  }

  async get(tenantId: string, orgId: string, vcId: string): Promise<IssuedCredentialRecord> {
    const c = await this.r().credentials.find(tenantId, orgId, vcId);
    if (!c) throw errors.notFound('credential not found');
    return c;
  }

  /** Flips the credential's status bit (compare-and-set; revoking a revoked credential changes nothing). */
  async revoke(tenantId: string, actor: Actor, orgId: string, vcId: string): Promise<IssuedCredentialRecord> {
    await this.transaction(async (trx) => {
      const c = await this.r(trx).credentials.find(tenantId, orgId, vcId);
      if (!c) throw errors.notFound('credential not found');
      await revokeCredential(trx, this.deps.db.dialect, this.deps.events, c, actor, this.deps.clock.now());
    });
    return this.get(tenantId, orgId, vcId);
  }

  // --- status lists -----------------------------------------------------------------------

  /** The signed status list: the cached token while no bit changed and it is far from expiry. */
  async statusList(tenant: IssuerTenant, listId: string): Promise<string> {
    const r = this.r();
    const list = await r.statusLists.find(tenant.id, listId);
    if (!list) throw errors.notFound('no such status list');
    const now = this.deps.clock.now();
    if (list.signedJwt && list.signedVersion === list.version && (list.signedUntil ?? 0) > now) return list.signedJwt;
    const revoked = await r.statusLists.revokedIndexes(list.id);
    const iat = Math.floor(now / 1000);
    const exp = iat + STATUS_LIST_EXP_SECONDS;
    const jwt = await statusListToken(
      { issuer: tenant.issuer, uri: statusListUri(tenant.issuer, list.id), size: list.size, revoked, iat, exp, ttl: this.deps.settings.statusListTtlSeconds },
      await this.deps.keys.activeKey(tenant.id, 'EdDSA'),
    );
    await r.statusLists.cacheSigned(list.id, list.version, jwt, (exp - STATUS_LIST_RESIGN_MARGIN_S) * 1000);
    return jwt;
  }
}

/** valid → revoked, the list's version bumped (its cached token is re-signed), credential.revoked. */
async function revokeCredential(
  trx: Executor,
  dialect: Dialect,
  events: EventRecorder,
  c: IssuedCredentialRecord,
  actor: Actor,
  now: number,
): Promise<boolean> {
  const r = repos(trx, dialect);
  if (!(await r.credentials.revoke(c.tenantId, c.id, now))) return false;
  await r.statusLists.bumpVersion(c.statusListId);
  await events.record(trx, {
    tenantId: c.tenantId,
    type: 'credential.revoked',
    organizationId: c.organizationId,
    actor,
    data: { vc_id: c.id, type: c.configurationId, format: c.format, subject: c.subject, status_list_uri: c.statusUri, index: c.statusIndex },
  });
  return true;
}

/**
 * A member left an organization (API, SCIM, user or organization deletion): inside the caller's
 * transaction, every valid OrganizationMembership credential issued for that membership is
 * revoked (credential.revoked each) and the member's open offers are withdrawn.
 */
export async function revokeMembershipCredentials(
  trx: Executor,
  deps: { dialect: Dialect; events: EventRecorder; now: number },
  m: { tenantId: string; organizationId: string; userId: string },
  actor: Actor,
): Promise<void> {
  const r = repos(trx, deps.dialect);
  await r.credentialOffers.killForMember(m.tenantId, m.organizationId, m.userId);
  for (const c of await r.credentials.validForMember(m.tenantId, m.organizationId, m.userId, MEMBERSHIP_TYPE)) {
    await revokeCredential(trx, deps.dialect, deps.events, c, actor, deps.now);
  }
}
