import type { Kysely } from 'kysely';
import {
  type CodeRecord,
  DEFAULT_CLIENT_SETTINGS,
  type FlowRecord,
  type ParRecord,
  type SigninClientSettings,
  type SigninStore,
} from '../../oauth/authorize/types.js';
import type { ClaimMapping } from '../../oauth/claims-mapping.js';
import { consumeOnce, deleteExpired, Sweeper } from '../atomic.js';
import { bool, codec, field, json } from '../codec.js';
import type { Database } from '../schema.js';
import { SigninConsentRepo } from './signin-accounts.js';

const HOUR = 3600_000;

/** Expired PAR, flow and code rows are swept every 200 writes (of any instance of the repository). */
const sweeper = new Sweeper(200, async (db, now) => {
  await deleteExpired(db, 'signin_par_requests', 'expires_at', now - HOUR);
  await deleteExpired(db, 'signin_flows', 'expires_at', now - HOUR);
  await deleteExpired(db, 'signin_codes', 'expires_at', now - 24 * HOUR);
});

const settings = codec<SigninClientSettings>()('signin_client_settings', {
  thirdParty: bool,
  requirePar: bool,
  idTokenAlg: field<SigninClientSettings['idTokenAlg'], string>(
    (v) => (v === 'EdDSA' ? 'EdDSA' : 'RS256'),
    (v) => v,
  ),
  postLogoutRedirectUris: json<string[]>(),
  backchannelLogoutUri: true,
  backchannelLogoutSessionRequired: bool,
  requireSignedRequestObject: bool,
  profile: field<SigninClientSettings['profile'], string | null>(
    (v) => (v === 'fapi2' ? 'fapi2' : null),
    (v) => v,
  ),
  claims: field<ClaimMapping[], string | null>(
    (v) => (v ? (JSON.parse(v) as ClaimMapping[]) : []),
    (v) => (v.length > 0 ? JSON.stringify(v) : null),
  ),
});
const pars = codec<ParRecord>()('signin_par_requests', {
  tenantId: true,
  clientId: true,
  request: json<ParRecord['request']>(),
  expiresAt: true,
  consumedAt: true,
});
const flows = codec<FlowRecord>()('signin_flows', {
  tenantId: true,
  clientId: true,
  request: json<FlowRecord['request']>(),
  parHash: true,
  loginAfter: true,
  createdAt: true,
  expiresAt: true,
  completedAt: true,
});
const codes = codec<CodeRecord>()('signin_codes', {
  tenantId: true,
  clientId: true,
  userId: true,
  grant: json<CodeRecord['grant']>(),
  expiresAt: true,
  consumedAt: true,
  issuedJti: true,
  issuedExp: true,
  issuedFamily: true,
});

class Rollback extends Error {}

/**
 * PAR request_uris, flows and codes (consume-once, docs/storage.md) and per-client sign-in
 * settings. Every query filters on tenant_id.
 */
export class SigninStoreRepo implements SigninStore {
  constructor(private readonly db: Kysely<Database>) {}

  async clientSettings(tenantId: string, clientId: string): Promise<SigninClientSettings> {
    const r = await this.db
      .selectFrom('signin_client_settings')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, client_id: clientId }))
      .executeTakeFirst();
    return r ? settings.toRecord(r) : { ...DEFAULT_CLIENT_SETTINGS };
  }

  async saveClientSettings(tenantId: string, clientId: string, s: SigninClientSettings, now: number): Promise<void> {
    const values = { ...settings.toRow(s), updated_at: now };
    await this.db
      .insertInto('signin_client_settings')
      .values({ tenant_id: tenantId, client_id: clientId, ...values })
      .onConflict((oc) => oc.columns(['tenant_id', 'client_id']).doUpdateSet(values))
      .execute();
  }

  async savePar(uriHash: string, rec: ParRecord, now: number): Promise<void> {
    await sweeper.tick(this.db, now);
    await this.db
      .insertInto('signin_par_requests')
      .values({ uri_hash: uriHash, ...pars.toRow(rec), created_at: now, consumed_at: null })
      .execute();
  }

  async findPar(tenantId: string, uriHash: string): Promise<ParRecord | undefined> {
    const r = await this.db
      .selectFrom('signin_par_requests')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, uri_hash: uriHash }))
      .executeTakeFirst();
    return r && pars.toRecord(r);
  }

  async createFlow(flowHash: string, rec: FlowRecord): Promise<void> {
    await sweeper.tick(this.db, rec.createdAt);
    await this.db
      .insertInto('signin_flows')
      .values({ flow_hash: flowHash, ...flows.toRow(rec), completed_at: null })
      .execute();
  }

  async findFlow(tenantId: string, flowHash: string): Promise<FlowRecord | undefined> {
    const r = await this.db
      .selectFrom('signin_flows')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, flow_hash: flowHash }))
      .executeTakeFirst();
    return r && flows.toRecord(r);
  }

  async completeFlow(tenantId: string, flowHash: string, parHash: string | null, codeHash: string, code: CodeRecord, now: number): Promise<boolean> {
    try {
      await this.db.transaction().execute(async (trx) => {
        const flow = { key: { tenant_id: tenantId, flow_hash: flowHash }, column: 'completed_at', expiresColumn: 'expires_at', now } as const;
        if (!(await consumeOnce(trx, 'signin_flows', flow))) throw new Rollback();
        if (
          parHash !== null &&
          !(await consumeOnce(trx, 'signin_par_requests', { key: { tenant_id: tenantId, uri_hash: parHash }, column: 'consumed_at', now }))
        ) {
          throw new Rollback();
        }
        const fresh = { ...code, tenantId, consumedAt: null, issuedJti: null, issuedExp: null, issuedFamily: null };
        await trx
          .insertInto('signin_codes')
          .values({ code_hash: codeHash, ...codes.toRow(fresh), session_id: code.grant.sessionId, created_at: now })
          .execute();
      });
      return true;
    } catch (err) {
      if (err instanceof Rollback) return false;
      throw err;
    }
  }

  async redeemCode(tenantId: string, codeHash: string, clientId: string, now: number): Promise<{ won: boolean; code: CodeRecord | undefined }> {
    const won = await consumeOnce(this.db, 'signin_codes', {
      key: { tenant_id: tenantId, code_hash: codeHash, client_id: clientId },
      column: 'consumed_at',
      expiresColumn: 'expires_at',
      now,
      // Bound to the browser session it was issued in: once that session is logged out, revoked,
      // timed out or gone with its user, the code cannot be redeemed (decided in the same statement).
      also: (eb) =>
        eb.or([
          eb('signin_codes.session_id', 'is', null),
          eb.exists(
            eb
              .selectFrom('signin_sessions as s')
              .select('s.id')
              .whereRef('s.id', '=', 'signin_codes.session_id')
              .where('s.tenant_id', '=', tenantId)
              .where('s.revoked_at', 'is', null)
              .where('s.expires_at', '>', now)
              .where('s.idle_expires_at', '>', now),
          ),
        ]),
    });
    const r = await this.db
      .selectFrom('signin_codes')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, code_hash: codeHash }))
      .executeTakeFirst();
    return { won, code: r && codes.toRecord(r) };
  }

  async recordIssued(tenantId: string, codeHash: string, issued: { jti: string; exp: number; family: string | null }): Promise<void> {
    await this.db
      .updateTable('signin_codes')
      .set({ issued_jti: issued.jti, issued_exp: issued.exp, issued_family: issued.family })
      .where((eb) => eb.and({ tenant_id: tenantId, code_hash: codeHash }))
      .execute();
  }

  async recordSessionClient(tenantId: string, sessionId: string, clientId: string, now: number): Promise<void> {
    // INSERT … SELECT: nothing when the session row is gone (swept meanwhile).
    await this.db
      .insertInto('signin_session_clients')
      .columns(['tenant_id', 'session_id', 'client_id', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('signin_sessions')
          .select([eb.val(tenantId).as('tenant_id'), 'id', eb.val(clientId).as('client_id'), eb.val(now).as('created_at')])
          .where((w) => w.and({ tenant_id: tenantId, id: sessionId })),
      )
      .onConflict((oc) => oc.columns(['session_id', 'client_id']).doNothing())
      .execute();
  }

  consent(tenantId: string, userId: string, clientId: string): Promise<{ scopes: string[]; resources: string[] } | undefined> {
    return new SigninConsentRepo(this.db).find(tenantId, userId, clientId);
  }
}
