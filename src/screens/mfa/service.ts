/**
 * Second factors and passkeys: TOTP (RFC 6238, otplib), recovery codes, WebAuthn registration and
 * authentication (@simplewebauthn/server) with consume-once challenges bound to the browser, the
 * organizations' AAGUID allowlists, and the MFA policy. Every change writes its audit event in the
 * same transaction. docs/passkeys.md.
 */
import { randomBytes, type X509Certificate } from 'node:crypto';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { generateSecret, generateURI, verify as verifyTotp } from 'otplib';
import QRCode from 'qrcode';
import type { Actor, EventType } from '../../events/catalogue.js';
import type { EventRecorder } from '../../events/recorder.js';
import type { Clock } from '../../kernel/clock.js';
import type { Envelope } from '../../kernel/crypto/envelope.js';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { newId } from '../../kernel/ids.js';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import type { Db, Executor } from '../../storage/db.js';
import { type ChallengeRecord, DEFAULT_MFA_POLICY, type MfaPolicy, type PasskeyRecord, strictestPolicy } from '../../storage/repos/mfa.js';
import { repos } from '../../storage/repos/index.js';
import type { UserRecord } from '../../storage/repos/users.js';
import { type Acr, amrOfPasskey } from '../../oauth/authorize/acr.js';
import type { Logger } from '../../kernel/logging.js';
import { type FidoMetadata, warnIfStale } from './metadata.js';
import { chainVerifies } from './trust.js';

/** WebAuthn challenges live this long (the issue: within 5 minutes). */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Adding or removing a factor needs a login at most this old. */
export const REAUTH_MS = 5 * 60_000;
/** TOTP and recovery-code attempts per user per window. */
export const MFA_MAX_ATTEMPTS = 10;
export const MFA_ATTEMPT_WINDOW_MS = 15 * 60_000;
export const RECOVERY_CODE_COUNT = 10;
const TOTP_PERIOD = 30;

export interface WebauthnTenant {
  id: string;
  issuer: string;
}

export interface MfaSettings {
  /** Attestation roots the operator configured (KEYHALL_WEBAUTHN_TRUST_ANCHORS); empty: none. */
  trustAnchors: X509Certificate[];
  /** The verified FIDO MDS BLOB (KEYHALL_WEBAUTHN_MDS_FILE), when configured. */
  metadata?: FidoMetadata;
  /** Where a stale MDS BLOB (past its nextUpdate) is reported. */
  log?: Pick<Logger, 'warn'>;
}

export type PasskeyRegistration = { kind: 'ok'; passkey: PasskeyRecord } | { kind: 'rejected'; message: string } | { kind: 'invalid'; message: string };

export type PasskeyLogin = { kind: 'ok'; user: UserRecord; passkey: PasskeyRecord; amr: string[] } | { kind: 'invalid'; message: string };

export type CodeCheck = { kind: 'ok'; amr: string[] } | { kind: 'invalid' } | { kind: 'limited'; retryAfterSeconds: number };

const userActor = (id: string | null): Actor => ({ type: 'user', id });

/** RP ID = the tenant host without port; origin = the issuer's origin. */
export function relyingParty(tenant: WebauthnTenant): { rpID: string; origin: string } {
  const url = new URL(tenant.issuer);
  return { rpID: url.hostname, origin: url.origin };
}

/** The browser a challenge is bound to: the SHA-256 of its CSRF cookie (each browser has its own). */
export const browserBinding = (csrfSecret: string | undefined) => sha256Hex(`webauthn:${csrfSecret ?? ''}`);

/** The challenge the browser signed, read from clientDataJSON (checked again by the library). */
function challengeOf(clientDataJSON: string): string | undefined {
  try {
    const c = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof c.challenge === 'string' && c.challenge.length <= 200 ? c.challenge : undefined;
  } catch {
    return undefined;
  }
}

function parseJson<T>(text: string | undefined): T | undefined {
  if (!text || text.length > 64 * 1024) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}

// @simplewebauthn/server is loaded on first use: its import costs most of a second of start-up,
// paid by every server start and CLI command otherwise.
let webauthnLibrary: Promise<[typeof import('@simplewebauthn/server'), typeof import('@simplewebauthn/server/helpers')]> | undefined;
const webauthn = () => (webauthnLibrary ??= Promise.all([import('@simplewebauthn/server'), import('@simplewebauthn/server/helpers')]));

/** The signature counter of an assertion's authenticator data. */
async function signCount(authenticatorData: string): Promise<number | undefined> {
  const [, { parseAuthenticatorData }] = await webauthn();
  try {
    return parseAuthenticatorData(Buffer.from(authenticatorData, 'base64url') as Parameters<typeof parseAuthenticatorData>[0]).counter;
  } catch {
    return undefined;
  }
}

/** Ten recovery codes of 50 random bits each, `xxxxx-xxxxx` in Crockford-like base32 lower case. */
function newRecoveryCodes(): string[] {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(10);
    const chars = [...bytes].map((b) => alphabet[b % alphabet.length]!);
    return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
  });
}

const normalizeRecoveryCode = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '');
const recoveryHash = (tenantId: string, userId: string, code: string) => sha256Hex(`recovery:${tenantId}:${userId}:${normalizeRecoveryCode(code)}`);

export class MfaService {
  #checks = 0;
  #staleReported = false;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly events: EventRecorder,
    private readonly envelope: Envelope,
    readonly settings: MfaSettings,
  ) {}

  #repos(trx?: Executor) {
    return repos(trx ?? this.db.kysely, this.db.dialect);
  }

  async #record(trx: Executor, tenantId: string, type: EventType, actor: Actor, data: Record<string, unknown>, organizationId: string | null = null) {
    await this.events.record(trx, { tenantId, type, organizationId, actor, data });
  }

  async #audit(tenantId: string, type: EventType, actor: Actor, data: Record<string, unknown>, organizationId: string | null = null) {
    await this.events.transaction(this.db.kysely, (trx) => this.#record(trx, tenantId, type, actor, data, organizationId));
  }

  // ---------------------------------------------------------------- state

  async factors(tenantId: string, userId: string) {
    const r = this.#repos();
    const [totp, passkeys, recovery] = await Promise.all([
      r.mfa.totp(tenantId, userId),
      r.mfa.listPasskeys(tenantId, userId),
      r.mfa.unusedRecoveryCodes(tenantId, userId),
    ]);
    return { totp: totp?.confirmed_at != null, totpPending: totp !== undefined && totp.confirmed_at == null, passkeys, recoveryCodes: recovery };
  }

  /**
   * The policy that applies to a user: the strictest of the tenant's (default optional) and
   * those of the user's organizations and of the organization the sign-in names.
   */
  async policyFor(tenantId: string, userId: string, organizationId?: string | null, trx?: Executor): Promise<MfaPolicy> {
    const { organizations: orgs, policies } = await this.#repos(trx).mfa.policiesForUser(tenantId, userId, organizationId);
    if (organizationId) orgs.push(organizationId);
    return strictestPolicy(policies.get('') ?? DEFAULT_MFA_POLICY, ...orgs.map((o) => policies.get(o)).filter((p): p is MfaPolicy => p !== undefined));
  }

  /**
   * After the first factor (a password, or an SSO sign-in): is a second factor owed before the
   * session is usable? `trx`: read inside the caller's transaction (SSO provisioning).
   */
  async secondFactorNeeded(tenantId: string, userId: string, opts: { organizationId?: string | null; acr?: Acr | null; trx?: Executor }): Promise<boolean> {
    const policy = await this.policyFor(tenantId, userId, opts.organizationId, opts.trx);
    if (policy === 'required' || (opts.acr && opts.acr !== 'pwd')) return true;
    if (policy === 'off') return false;
    return this.hasSecondFactor(tenantId, userId, opts.trx);
  }

  /** Whether the user has a second factor to be asked for: a confirmed TOTP or a passkey. */
  hasSecondFactor(tenantId: string, userId: string, trx?: Executor): Promise<boolean> {
    return this.#repos(trx).mfa.hasSecondFactor(tenantId, userId);
  }

  // ---------------------------------------------------------------- TOTP

  #secretContext = (tenantId: string, userId: string) => `mfa_totp:${tenantId}:${userId}`;

  /** Starts (or restarts) TOTP enrolment with a fresh secret; false when TOTP is already set up. */
  async startTotp(tenantId: string, userId: string): Promise<boolean> {
    const secret = generateSecret();
    return this.#repos().mfa.startTotp(tenantId, userId, this.envelope.encrypt(secret, this.#secretContext(tenantId, userId)), this.clock.now());
  }

  /** The pending enrolment: the otpauth:// URI and its QR code as SVG markup (rendered here, no outside service). */
  async totpEnrolment(tenantId: string, user: UserRecord, issuerLabel: string): Promise<{ uri: string; svg: string; secret: string } | undefined> {
    const row = await this.#repos().mfa.totp(tenantId, user.id);
    if (!row || row.confirmed_at !== null) return undefined;
    const secret = this.envelope.decrypt(row.secret, this.#secretContext(tenantId, user.id));
    const uri = generateURI({ issuer: issuerLabel, label: user.email, secret, period: TOTP_PERIOD, digits: 6, algorithm: 'sha1' });
    const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    return { uri, svg, secret };
  }

  /** Verifies a code against the stored secret: ±1 step, never a step at or before the last accepted one. */
  async #verifyCode(tenantId: string, userId: string, code: string, confirm: boolean): Promise<boolean> {
    const row = await this.#repos().mfa.totp(tenantId, userId);
    if (!row || (row.confirmed_at === null) !== confirm) return false;
    if (!/^\d{6}$/.test(code)) return false;
    const secret = this.envelope.decrypt(row.secret, this.#secretContext(tenantId, userId));
    const result = await verifyTotp({
      secret,
      token: code,
      epoch: Math.floor(this.clock.now() / 1000),
      epochTolerance: TOTP_PERIOD,
      period: TOTP_PERIOD,
      ...(row.last_time_step !== null ? { afterTimeStep: Number(row.last_time_step) } : {}),
    }).catch(() => ({ valid: false as const }));
    if (!result.valid) return false;
    // The atomic part: the step moves forward only if no code of this or a later step was accepted.
    return this.#repos().mfa.acceptTimeStep(tenantId, userId, (result as { timeStep: number }).timeStep, this.clock.now(), confirm);
  }

  async #limited(tenantId: string, userId: string): Promise<number | undefined> {
    const waitMs = await this.#repos().rateLimits.hit(tenantId, `mfa:${userId}`, MFA_MAX_ATTEMPTS, MFA_ATTEMPT_WINDOW_MS, this.clock.now());
    return waitMs > 0 ? Math.ceil(waitMs / 1000) : undefined;
  }

  /** Confirms enrolment with a first code; returns the recovery codes (shown once) or undefined. */
  async confirmTotp(
    tenantId: string,
    userId: string,
    code: string,
  ): Promise<{ kind: 'ok'; recoveryCodes: string[] | null } | { kind: 'invalid' } | { kind: 'limited'; retryAfterSeconds: number }> {
    const retry = await this.#limited(tenantId, userId);
    if (retry !== undefined) return { kind: 'limited', retryAfterSeconds: retry };
    if (!(await this.#verifyCode(tenantId, userId, code.trim(), true))) return { kind: 'invalid' };
    const existing = await this.#repos().mfa.unusedRecoveryCodes(tenantId, userId);
    const codes = existing > 0 ? null : newRecoveryCodes();
    await this.events.transaction(this.db.kysely, async (trx) => {
      if (codes)
        await this.#repos(trx).mfa.replaceRecoveryCodes(
          tenantId,
          userId,
          codes.map((c) => recoveryHash(tenantId, userId, c)),
          this.clock.now(),
        );
      await this.#record(trx, tenantId, 'mfa.totp.enrolled', userActor(userId), { user_id: userId });
      if (codes) await this.#record(trx, tenantId, 'mfa.recovery_codes.regenerated', userActor(userId), { user_id: userId, count: codes.length });
    });
    return { kind: 'ok', recoveryCodes: codes };
  }

  async removeTotp(tenantId: string, userId: string): Promise<void> {
    await this.events.transaction(this.db.kysely, async (trx) => {
      if (await this.#repos(trx).mfa.deleteTotp(tenantId, userId))
        await this.#record(trx, tenantId, 'mfa.totp.removed', userActor(userId), { user_id: userId });
    });
  }

  async regenerateRecoveryCodes(tenantId: string, userId: string): Promise<string[]> {
    const codes = newRecoveryCodes();
    await this.events.transaction(this.db.kysely, async (trx) => {
      await this.#repos(trx).mfa.replaceRecoveryCodes(
        tenantId,
        userId,
        codes.map((c) => recoveryHash(tenantId, userId, c)),
        this.clock.now(),
      );
      await this.#record(trx, tenantId, 'mfa.recovery_codes.regenerated', userActor(userId), { user_id: userId, count: codes.length });
    });
    return codes;
  }

  /** The second factor at sign-in by TOTP code or recovery code (rate-limited per user, audited). */
  async checkCode(tenantId: string, userId: string, input: { totp?: string; recovery?: string }, meta: { ip: string }): Promise<CodeCheck> {
    const retry = await this.#limited(tenantId, userId);
    if (retry !== undefined) return { kind: 'limited', retryAfterSeconds: retry };
    const now = this.clock.now();
    if (input.totp) {
      if (await this.#verifyCode(tenantId, userId, input.totp.trim(), false)) {
        await this.#audit(tenantId, 'mfa.challenge.succeeded', userActor(userId), { user_id: userId, method: 'totp', ip: meta.ip });
        return { kind: 'ok', amr: ['otp'] };
      }
    } else if (input.recovery && input.recovery.length <= 64) {
      const used = await this.events.transaction(this.db.kysely, async (trx) => {
        if (!(await this.#repos(trx).mfa.useRecoveryCode(tenantId, userId, recoveryHash(tenantId, userId, input.recovery!), now))) return false;
        await this.#record(trx, tenantId, 'mfa.recovery_code.used', userActor(userId), { user_id: userId, ip: meta.ip });
        await this.#record(trx, tenantId, 'mfa.challenge.succeeded', userActor(userId), { user_id: userId, method: 'recovery_code', ip: meta.ip });
        return true;
      });
      if (used) return { kind: 'ok', amr: ['otp'] };
    }
    await this.#audit(tenantId, 'mfa.challenge.failed', userActor(userId), { user_id: userId, method: input.totp ? 'totp' : 'recovery_code', ip: meta.ip });
    return { kind: 'invalid' };
  }

  // ---------------------------------------------------------------- passkeys

  /**
   * The AAGUID allowlists that apply to a user: one per organization they belong to that has one.
   * None for a tenant administrator: their factors guard the whole tenant (the console), which
   * no organization governs, so one organization's list must not decide them (docs/passkeys.md).
   */
  async #allowlists(tenantId: string, userId: string): Promise<Array<{ organizationId: string; aaguids: string[] }>> {
    const r = this.#repos();
    if (await r.tenantAdmins.isAdmin(tenantId, userId)) return [];
    const memberships = await r.members.listByUser(tenantId, userId);
    const out: Array<{ organizationId: string; aaguids: string[] }> = [];
    for (const m of memberships) {
      const org = await r.organizations.find(tenantId, m.organizationId);
      if (org?.webauthnAaguidAllowlist) out.push({ organizationId: org.id, aaguids: org.webauthnAaguidAllowlist });
    }
    return out;
  }

  async #challenge(
    tenantId: string,
    purpose: ChallengeRecord['purpose'],
    binding: string,
    userId: string | null,
    attestation: 'none' | 'direct',
  ): Promise<string> {
    const challenge = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const mfa = this.#repos().mfa;
    if (++this.#checks % 100 === 0) await mfa.sweepChallenges(now - CHALLENGE_TTL_MS);
    await mfa.insertChallenge({ challenge, tenantId, purpose, binding, userId, attestation, expiresAt: now + CHALLENGE_TTL_MS });
    return challenge;
  }

  /** Whether the session's login is recent enough to add or remove a factor. */
  fresh(session: SessionRecord): boolean {
    return this.clock.now() - session.authTime <= REAUTH_MS;
  }

  /** Creation options for a signed-in user (resident key preferred, user verification required). */
  async registrationOptions(tenant: WebauthnTenant, user: UserRecord, binding: string) {
    const { rpID } = relyingParty(tenant);
    const existing = await this.#repos().mfa.listPasskeys(tenant.id, user.id);
    // When an allowlist applies, ask for the attestation statement: a `none` AAGUID is only claimed.
    const attestation = (await this.#allowlists(tenant.id, user.id)).length > 0 ? 'direct' : 'none';
    const challenge = await this.#challenge(tenant.id, 'register', binding, user.id, attestation);
    const [{ generateRegistrationOptions }] = await webauthn();
    return generateRegistrationOptions({
      rpName: new URL(tenant.issuer).host,
      rpID,
      userName: user.email,
      userDisplayName: user.name ?? user.email,
      userID: new TextEncoder().encode(user.id),
      challenge: Buffer.from(challenge, 'base64url'),
      attestationType: attestation,
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports as never })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      timeout: CHALLENGE_TTL_MS,
    });
  }

  async registerPasskey(
    tenant: WebauthnTenant,
    user: UserRecord,
    binding: string,
    responseText: string | undefined,
    nameInput: string | undefined,
  ): Promise<PasskeyRegistration> {
    const response = parseJson<RegistrationResponseJSON>(responseText);
    const challenge = response?.response?.clientDataJSON ? challengeOf(response.response.clientDataJSON) : undefined;
    if (!response || !challenge) return { kind: 'invalid', message: 'The passkey response could not be read. Try again.' };
    const now = this.clock.now();
    const stored = await this.#repos().mfa.consumeChallenge(tenant.id, challenge, 'register', binding, now);
    if (!stored || stored.userId !== user.id) return { kind: 'invalid', message: 'This passkey request has expired or was already used. Try again.' };
    const { rpID, origin } = relyingParty(tenant);
    let verification;
    try {
      const [{ verifyRegistrationResponse }] = await webauthn();
      verification = await verifyRegistrationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: origin,
        expectedRPID: rpID,
        requireUserVerification: true,
      });
    } catch (err) {
      return { kind: 'invalid', message: `The passkey could not be verified: ${err instanceof Error ? err.message : 'invalid response'}` };
    }
    if (!verification.verified) return { kind: 'invalid', message: 'The passkey could not be verified.' };
    const info = verification.registrationInfo;
    const aaguid = info.aaguid.toLowerCase();
    const { metadata } = this.settings;
    if (metadata && !this.#staleReported) this.#staleReported = warnIfStale(metadata, now, this.settings.log);
    const mds = metadata?.entries.get(aaguid);
    // A model the FIDO Alliance reports revoked or compromised is refused, allowlist or not.
    if (mds?.refusedStatus) {
      await this.#audit(tenant.id, 'passkey.rejected', userActor(user.id), {
        user_id: user.id,
        aaguid,
        organization_id: null,
        reason: 'authenticator_revoked',
        status: mds.refusedStatus,
      });
      return {
        kind: 'rejected',
        message: `This kind of passkey (authenticator model ${aaguid}) has been reported revoked or compromised (${mds.refusedStatus}). Use another authenticator.`,
      };
    }
    const lists = await this.#allowlists(tenant.id, user.id);
    const refusing = lists.filter((l) => !l.aaguids.includes(aaguid));
    // Verified: the library checked the statement's signature with its leaf certificate, and the
    // chain verifies to an operator anchor or to a root the MDS BLOB lists for this AAGUID.
    // `none` and self attestation never are.
    const anchored = this.settings.trustAnchors.length > 0 || metadata !== undefined;
    const anchors = [...this.settings.trustAnchors, ...(mds?.roots ?? [])];
    const attestationVerified = anchors.length > 0 && info.fmt !== 'none' && chainVerifies(await x5cOf(info.attestationObject), anchors, now);
    if (refusing.length > 0 || (lists.length > 0 && anchored && !attestationVerified)) {
      await this.events.transaction(this.db.kysely, async (trx) => {
        for (const l of refusing.length > 0 ? refusing : lists) {
          await this.#record(
            trx,
            tenant.id,
            'passkey.rejected',
            userActor(user.id),
            { user_id: user.id, aaguid, organization_id: l.organizationId, reason: refusing.length > 0 ? 'aaguid_not_allowed' : 'attestation_not_verified' },
            l.organizationId,
          );
        }
      });
      return {
        kind: 'rejected',
        message:
          refusing.length > 0
            ? `Your organization does not allow this kind of passkey (authenticator model ${aaguid}). Use an authenticator your organization approved.`
            : 'Your organization requires a passkey whose maker vouches for it (attestation), and this one could not be verified.',
      };
    }
    const name = (nameInput ?? '').trim().slice(0, 100) || `Passkey ${new Date(now).toISOString().slice(0, 10)}`;
    const passkey: PasskeyRecord = {
      id: newId('pk', now),
      tenantId: tenant.id,
      userId: user.id,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: (response.response.transports ?? []).filter((t) => typeof t === 'string').slice(0, 10),
      aaguid,
      name,
      backedUp: info.credentialBackedUp,
      attestationFormat: info.fmt,
      attestationVerified,
      createdAt: now,
      lastUsedAt: null,
      disabledAt: null,
    };
    try {
      await this.events.transaction(this.db.kysely, async (trx) => {
        await this.#repos(trx).mfa.insertPasskey(passkey);
        await this.#record(trx, tenant.id, 'passkey.registered', userActor(user.id), {
          user_id: user.id,
          passkey_id: passkey.id,
          aaguid,
          attestation_format: info.fmt,
          attestation_verified: attestationVerified,
        });
      });
    } catch {
      return { kind: 'invalid', message: 'This passkey is already registered.' };
    }
    return { kind: 'ok', passkey };
  }

  /** Request options: discoverable credentials (no allowCredentials, so nothing tells which accounts have passkeys). */
  async authenticationOptions(tenant: WebauthnTenant, binding: string, purpose: 'login' | 'second_factor', userId: string | null) {
    const { rpID } = relyingParty(tenant);
    const challenge = await this.#challenge(tenant.id, purpose, binding, userId, 'none');
    const allow = purpose === 'second_factor' && userId ? await this.#repos().mfa.listPasskeys(tenant.id, userId) : [];
    const [{ generateAuthenticationOptions }] = await webauthn();
    return generateAuthenticationOptions({
      rpID,
      challenge: Buffer.from(challenge, 'base64url'),
      userVerification: purpose === 'login' ? 'required' : 'preferred',
      allowCredentials: allow.map((p) => ({ id: p.credentialId, transports: p.transports as never })),
      timeout: CHALLENGE_TTL_MS,
    });
  }

  /**
   * Verifies an assertion: the challenge is consumed once (this browser, this purpose,
   * unexpired); the signature, origin, RP ID and user verification are checked; a counter that
   * does not move forward (unless both are 0) is refused, disables the passkey and is audited as
   * a cloned authenticator; a disabled passkey is refused.
   */
  async authenticatePasskey(
    tenant: WebauthnTenant,
    binding: string,
    responseText: string | undefined,
    purpose: 'login' | 'second_factor',
    expectedUserId: string | null,
    meta: { ip: string },
  ): Promise<PasskeyLogin> {
    const invalid = (message = 'The passkey sign-in did not succeed. Try again.'): PasskeyLogin => ({ kind: 'invalid', message });
    const response = parseJson<AuthenticationResponseJSON>(responseText);
    const challenge = response?.response?.clientDataJSON ? challengeOf(response.response.clientDataJSON) : undefined;
    if (!response || !challenge || typeof response.id !== 'string' || typeof response.response.authenticatorData !== 'string') return invalid();
    const now = this.clock.now();
    const r = this.#repos();
    const stored = await r.mfa.consumeChallenge(tenant.id, challenge, purpose, binding, now);
    if (!stored) return invalid('This passkey request has expired or was already used. Try again.');
    const passkey = await r.mfa.findPasskeyByCredential(tenant.id, response.id);
    if (!passkey || (expectedUserId !== null && passkey.userId !== expectedUserId)) return invalid('This passkey is not registered here.');
    const handle = response.response.userHandle;
    if (handle && Buffer.from(handle, 'base64url').toString('utf8') !== passkey.userId) return invalid('This passkey is not registered here.');
    const user = await r.users.find(tenant.id, passkey.userId);
    if (!user) return invalid('This passkey is not registered here.');
    const { rpID, origin } = relyingParty(tenant);
    let verification;
    try {
      const [{ verifyAuthenticationResponse }] = await webauthn();
      verification = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: origin,
        expectedRPID: rpID,
        // The counter is judged below, after the signature, so that a regression is audited.
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: 0, transports: passkey.transports as never },
        requireUserVerification: purpose === 'login',
      });
    } catch {
      await this.#audit(tenant.id, 'mfa.challenge.failed', userActor(passkey.userId), { user_id: passkey.userId, method: 'passkey', ip: meta.ip });
      return invalid();
    }
    if (!verification.verified) return invalid();
    const copied = 'This passkey may have been copied: its signature counter went backwards. Use another sign-in method and contact your administrator.';
    if (passkey.disabledAt !== null) return invalid(copied);
    const counter = (await signCount(response.response.authenticatorData)) ?? 0;
    if ((counter > 0 || passkey.counter > 0) && counter <= passkey.counter) {
      // Refusing this one sign-in is not enough: a copy steps its counter past the stored one in
      // a few tries. Neither copy can be told from the original, so the passkey is disabled.
      await this.events.transaction(this.db.kysely, async (trx) => {
        if (!(await this.#repos(trx).mfa.disablePasskey(tenant.id, passkey.id, now))) return;
        await this.#record(trx, tenant.id, 'passkey.counter_regressed', userActor(passkey.userId), {
          user_id: passkey.userId,
          passkey_id: passkey.id,
          stored_counter: passkey.counter,
          presented_counter: counter,
          ip: meta.ip,
        });
      });
      return invalid(copied);
    }
    if (!(await r.mfa.passkeyUsed(tenant.id, passkey.id, passkey.counter, counter, now))) return invalid();
    const amr = amrOfPasskey(passkey, verification.authenticationInfo.userVerified);
    return { kind: 'ok', user, passkey: { ...passkey, counter, lastUsedAt: now }, amr };
  }

  /** A passkey given as the second factor at sign-in. */
  challengeSucceeded(tenantId: string, userId: string, method: 'passkey', ip: string): Promise<void> {
    return this.#audit(tenantId, 'mfa.challenge.succeeded', userActor(userId), { user_id: userId, method, ip });
  }

  async listPasskeys(tenantId: string, userId: string): Promise<PasskeyRecord[]> {
    return this.#repos().mfa.listPasskeys(tenantId, userId);
  }

  async renamePasskey(tenantId: string, userId: string, id: string, name: string): Promise<boolean> {
    const clean = name.trim().slice(0, 100);
    if (!clean) return false;
    return this.#repos().mfa.renamePasskey(tenantId, userId, id, clean);
  }

  /** Removes a passkey (by its user on /mfa, or through /v1 with the API key as actor). */
  async removePasskey(tenantId: string, userId: string, id: string, actor: Actor = userActor(userId)): Promise<boolean> {
    return this.events.transaction(this.db.kysely, async (trx) => {
      const removed = await this.#repos(trx).mfa.deletePasskey(tenantId, userId, id);
      if (removed) await this.#record(trx, tenantId, 'passkey.removed', actor, { user_id: userId, passkey_id: id, aaguid: removed.aaguid });
      return removed !== undefined;
    });
  }
}

/** The certificate chain of an attestation statement (empty for none and self attestation). */
async function x5cOf(attestationObject: Uint8Array): Promise<Uint8Array[]> {
  const [, { decodeAttestationObject }] = await webauthn();
  const x5c = decodeAttestationObject(attestationObject as Parameters<typeof decodeAttestationObject>[0])
    .get('attStmt')
    .get('x5c');
  return Array.isArray(x5c) ? x5c : [];
}
