import type { Kysely } from 'kysely';
import {
  type AuthorizationRequest,
  type CodeRecord,
  DEFAULT_CLIENT_SETTINGS,
  type FlowRecord,
  type ParRecord,
  type SigninClientSettings,
  type SigninStore,
} from '../../oauth/authorize/types.js';
import type { Database } from '../schema.js';
import type { ConsentResourcesColumn } from './signin-accounts.js';

/** How often (in writes) expired PAR, flow and code rows are swept. */
const SWEEP_EVERY = 200;

class Rollback extends Error {}

/**
 * PAR request_uris, flows and codes (consume-once, docs/storage.md) and per-client sign-in
 * settings. Every query filters on tenant_id.
 */
export class SigninStoreRepo implements SigninStore {
  #writes = 0;
  constructor(private readonly db: Kysely<Database>) {}

  async clientSettings(tenantId: string, clientId: string): Promise<SigninClientSettings> {
    const r = await this.db
      .selectFrom('signin_client_settings')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    if (!r) return { ...DEFAULT_CLIENT_SETTINGS };
    return {
      thirdParty: Number(r.third_party) === 1,
      requirePar: Number(r.require_par) === 1,
      idTokenAlg: r.id_token_alg === 'EdDSA' ? 'EdDSA' : 'RS256',
      postLogoutRedirectUris: JSON.parse(r.post_logout_redirect_uris) as string[],
    };
  }

  async saveClientSettings(tenantId: string, clientId: string, s: SigninClientSettings, now: number): Promise<void> {
    const values = {
      third_party: s.thirdParty ? 1 : 0,
      require_par: s.requirePar ? 1 : 0,
      id_token_alg: s.idTokenAlg,
      post_logout_redirect_uris: JSON.stringify(s.postLogoutRedirectUris),
      updated_at: now,
    };
    await this.db
      .insertInto('signin_client_settings')
      .values({ tenant_id: tenantId, client_id: clientId, ...values })
      .onConflict((oc) => oc.columns(['tenant_id', 'client_id']).doUpdateSet(values))
      .execute();
  }

  async #sweep(now: number): Promise<void> {
    if (++this.#writes % SWEEP_EVERY !== 0) return;
    await this.db.deleteFrom('signin_par_requests').where('expires_at', '<=', now - 3600_000).execute();
    await this.db.deleteFrom('signin_flows').where('expires_at', '<=', now - 3600_000).execute();
    await this.db.deleteFrom('signin_codes').where('expires_at', '<=', now - 24 * 3600_000).execute();
  }

  async savePar(uriHash: string, rec: ParRecord, now: number): Promise<void> {
    await this.#sweep(now);
    await this.db
      .insertInto('signin_par_requests')
      .values({
        uri_hash: uriHash,
        tenant_id: rec.tenantId,
        client_id: rec.clientId,
        request: JSON.stringify(rec.request),
        created_at: now,
        expires_at: rec.expiresAt,
        consumed_at: null,
      })
      .execute();
  }

  async findPar(tenantId: string, uriHash: string): Promise<ParRecord | undefined> {
    const r = await this.db
      .selectFrom('signin_par_requests')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('uri_hash', '=', uriHash)
      .executeTakeFirst();
    return (
      r && {
        tenantId: r.tenant_id,
        clientId: r.client_id,
        request: JSON.parse(r.request) as AuthorizationRequest,
        expiresAt: r.expires_at,
        consumedAt: r.consumed_at,
      }
    );
  }

  async createFlow(flowHash: string, rec: FlowRecord): Promise<void> {
    await this.#sweep(rec.createdAt);
    await this.db
      .insertInto('signin_flows')
      .values({
        flow_hash: flowHash,
        tenant_id: rec.tenantId,
        client_id: rec.clientId,
        request: JSON.stringify(rec.request),
        par_hash: rec.parHash,
        login_after: rec.loginAfter,
        created_at: rec.createdAt,
        expires_at: rec.expiresAt,
        completed_at: null,
      })
      .execute();
  }

  async findFlow(tenantId: string, flowHash: string): Promise<FlowRecord | undefined> {
    const r = await this.db.selectFrom('signin_flows').selectAll().where('tenant_id', '=', tenantId).where('flow_hash', '=', flowHash).executeTakeFirst();
    return (
      r && {
        tenantId: r.tenant_id,
        clientId: r.client_id,
        request: JSON.parse(r.request) as AuthorizationRequest,
        parHash: r.par_hash,
        loginAfter: r.login_after,
        createdAt: r.created_at,
        expiresAt: r.expires_at,
        completedAt: r.completed_at,
      }
    );
  }

  async completeFlow(tenantId: string, flowHash: string, parHash: string | null, codeHash: string, code: CodeRecord, now: number): Promise<boolean> {
    try {
      await this.db.transaction().execute(async (trx) => {
        const flow = await trx
          .updateTable('signin_flows')
          .set({ completed_at: now })
          .where('tenant_id', '=', tenantId)
          .where('flow_hash', '=', flowHash)
          .where('completed_at', 'is', null)
          .where('expires_at', '>', now)
          .executeTakeFirst();
        if (Number(flow.numUpdatedRows) !== 1) throw new Rollback();
        if (parHash !== null) {
          const par = await trx
            .updateTable('signin_par_requests')
            .set({ consumed_at: now })
            .where('tenant_id', '=', tenantId)
            .where('uri_hash', '=', parHash)
            .where('consumed_at', 'is', null)
            .executeTakeFirst();
          if (Number(par.numUpdatedRows) !== 1) throw new Rollback();
        }
        await trx
          .insertInto('signin_codes')
          .values({
            code_hash: codeHash,
            tenant_id: tenantId,
            client_id: code.clientId,
            user_id: code.userId,
            session_id: code.grant.sessionId,
            grant: JSON.stringify(code.grant),
            created_at: now,
            expires_at: code.expiresAt,
            consumed_at: null,
            issued_jti: null,
            issued_exp: null,
            issued_family: null,
          })
          .execute();
      });
      return true;
    } catch (err) {
      if (err instanceof Rollback) return false;
      throw err;
    }
  }

  async redeemCode(tenantId: string, codeHash: string, clientId: string, now: number): Promise<{ won: boolean; code: CodeRecord | undefined }> {
    const u = await this.db
      .updateTable('signin_codes')
      .set({ consumed_at: now })
      .where('tenant_id', '=', tenantId)
      .where('code_hash', '=', codeHash)
      .where('client_id', '=', clientId)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      // Bound to the browser session it was issued in: once that session is logged out, revoked,
      // timed out or gone with its user, the code cannot be redeemed (decided in the same statement).
      .where((eb) =>
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
      )
      .executeTakeFirst();
    const r = await this.db.selectFrom('signin_codes').selectAll().where('tenant_id', '=', tenantId).where('code_hash', '=', codeHash).executeTakeFirst();
    const code: CodeRecord | undefined = r && {
      tenantId: r.tenant_id,
      clientId: r.client_id,
      userId: r.user_id,
      grant: JSON.parse(r.grant) as CodeRecord['grant'],
      expiresAt: r.expires_at,
      consumedAt: r.consumed_at,
      issuedJti: r.issued_jti,
      issuedExp: r.issued_exp,
      issuedFamily: r.issued_family,
    };
    return { won: Number(u.numUpdatedRows) === 1, code };
  }

  async recordIssued(tenantId: string, codeHash: string, issued: { jti: string; exp: number; family: string | null }): Promise<void> {
    await this.db
      .updateTable('signin_codes')
      .set({ issued_jti: issued.jti, issued_exp: issued.exp, issued_family: issued.family })
      .where('tenant_id', '=', tenantId)
      .where('code_hash', '=', codeHash)
      .execute();
  }

  async consent(tenantId: string, userId: string, clientId: string): Promise<{ scopes: string[]; resources: string[] } | undefined> {
    const r = await this.db
      .withTables<ConsentResourcesColumn>()
      .selectFrom('signin_consents')
      .select(['scope', 'resources'])
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    if (!r) return undefined;
    return { scopes: r.scope.split(' ').filter(Boolean), resources: r.resources.split(' ').filter(Boolean) };
  }
}
