import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AuthorizationRequest, CodeRecord, FlowRecord } from '../../src/oauth/authorize/types.js';
import { repos } from '../../src/storage/repos/index.js';
import { openStorage, parallel, type StorageDb, tenant, uid, user } from './helpers.js';

const N = 20;
const NOW = 1_000_000;

const request = (clientId: string): AuthorizationRequest => ({
  clientId,
  redirectUri: 'https://app.example/cb',
  scopes: ['openid'],
  state: 's',
  nonce: null,
  codeChallenge: 'c',
  prompt: [],
  maxAge: null,
  loginHint: null,
  resources: [],
  dpopJkt: null,
  organizationId: null,
});

const code = (tenantId: string, userId: string, over: Partial<CodeRecord['grant']> = {}, expiresAt = NOW + 60_000): CodeRecord => ({
  tenantId,
  clientId: 'cli_a',
  userId,
  grant: {
    redirectUri: 'https://app.example/cb',
    scopes: ['openid'],
    nonce: null,
    codeChallenge: 'c',
    dpopJkt: null,
    resources: [],
    authTime: NOW,
    sessionId: null,
    organizationId: null,
    ...over,
  },
  expiresAt,
  consumedAt: null,
  issuedJti: null,
  issuedExp: null,
  issuedFamily: null,
});

describe('storage contract: consume-once', () => {
  let s: StorageDb;
  let a: string;
  let b: string;
  let userId: string;
  before(async () => {
    s = await openStorage();
    a = await tenant(s.r);
    b = await tenant(s.r);
    userId = (await user(s.r, a)).id;
  });
  after(() => s.close());

  /** A flow of tenant `a`, optionally from a PAR request_uri. */
  async function flow(parHash: string | null = null, expiresAt = NOW + 60_000): Promise<string> {
    const flowHash = uid('flow');
    const rec: FlowRecord = {
      tenantId: a,
      clientId: 'cli_a',
      request: request('cli_a'),
      parHash,
      loginAfter: null,
      createdAt: NOW,
      expiresAt,
      completedAt: null,
    };
    await s.r.signinStore.createFlow(flowHash, rec);
    return flowHash;
  }

  /** A code of tenant `a`, issued by completing a flow. */
  async function issuedCode(c: CodeRecord = code(a, userId)): Promise<string> {
    const codeHash = uid('code');
    assert.equal(await s.r.signinStore.completeFlow(a, await flow(), null, codeHash, c, NOW), true);
    return codeHash;
  }

  it('redeemCode: of 20 parallel callers exactly one wins, and all see the consumed code', async () => {
    const h = await issuedCode();
    const results = await parallel(N, () => s.r.signinStore.redeemCode(a, h, 'cli_a', NOW + 1));
    assert.equal(results.filter((x) => x.won).length, 1);
    for (const x of results) assert.equal(x.code?.consumedAt, NOW + 1);
    assert.equal((await s.r.signinStore.redeemCode(a, h, 'cli_a', NOW + 2)).won, false, 'a second redemption later loses too');
  });

  it('redeemCode: an expired code, another client or another tenant has no winner', async () => {
    const expired = await issuedCode(code(a, userId, {}, NOW + 10));
    assert.equal((await s.r.signinStore.redeemCode(a, expired, 'cli_a', NOW + 10)).won, false);

    const h = await issuedCode();
    assert.equal((await s.r.signinStore.redeemCode(a, h, 'cli_other', NOW)).won, false);
    const foreign = await s.r.signinStore.redeemCode(b, h, 'cli_a', NOW);
    assert.deepEqual(foreign, { won: false, code: undefined }, 'another tenant neither wins nor sees the code');
    assert.equal((await s.r.signinStore.redeemCode(a, h, 'cli_a', NOW)).won, true, 'the losers did not consume it');
  });

  it('redeemCode: a code bound to a session that is gone or revoked has no winner', async () => {
    const gone = await issuedCode(code(a, userId, { sessionId: 'ses_gone' }));
    assert.equal((await s.r.signinStore.redeemCode(a, gone, 'cli_a', NOW)).won, false);

    const session = {
      id: uid('ses'),
      tenantId: a,
      userId,
      userAgent: null,
      ip: null,
      authTime: NOW,
      createdAt: NOW,
      lastSeenAt: NOW,
      idleExpiresAt: NOW + 60_000,
      expiresAt: NOW + 60_000,
      revokedAt: null,
    };
    await s.r.sessions.insert(session, uid('tok'));
    const live = await issuedCode(code(a, userId, { sessionId: session.id }));
    const revoked = await issuedCode(code(a, userId, { sessionId: session.id }));
    assert.equal((await s.r.signinStore.redeemCode(a, live, 'cli_a', NOW)).won, true);
    await s.r.sessions.revoke(a, userId, session.id, NOW);
    assert.equal((await s.r.signinStore.redeemCode(a, revoked, 'cli_a', NOW)).won, false);
  });

  it('completeFlow: of 20 parallel completions of one flow exactly one stores its code', async () => {
    const f = await flow();
    const codes = Array.from({ length: N }, () => uid('code'));
    const results = await parallel(N, (i) => s.r.signinStore.completeFlow(a, f, null, codes[i] as string, code(a, userId), NOW));
    assert.equal(results.filter(Boolean).length, 1);
    const stored = await Promise.all(codes.map((h) => s.r.signinStore.redeemCode(a, h, 'cli_a', NOW)));
    assert.equal(stored.filter((x) => x.code).length, 1, 'the losers stored no code');
    assert.ok((await s.r.signinStore.findFlow(a, f))?.completedAt);
  });

  it('completeFlow consumes the PAR request_uri once: flows sharing it have one winner', async () => {
    const par = uid('par');
    await s.r.signinStore.savePar(par, { tenantId: a, clientId: 'cli_a', request: request('cli_a'), expiresAt: NOW + 60_000, consumedAt: null }, NOW);
    const flows = await parallel(N, () => flow(par));
    const results = await parallel(N, (i) => s.r.signinStore.completeFlow(a, flows[i] as string, par, uid('code'), code(a, userId), NOW));
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal((await s.r.signinStore.findPar(a, par))?.consumedAt, NOW);
    const losers = await Promise.all(flows.map((f) => s.r.signinStore.findFlow(a, f)));
    assert.equal(losers.filter((f) => f?.completedAt !== null).length, 1, "the losing flows' completion was rolled back");
  });

  it('completeFlow: an expired flow or another tenant has no winner', async () => {
    const expired = await flow(null, NOW);
    assert.equal(await s.r.signinStore.completeFlow(a, expired, null, uid('code'), code(a, userId), NOW), false);
    const f = await flow();
    assert.equal(await s.r.signinStore.completeFlow(b, f, null, uid('code'), code(b, userId), NOW), false);
    assert.equal(await s.r.signinStore.completeFlow(a, f, null, uid('code'), code(a, userId), NOW), true);
  });

  it('replay.use: of 20 parallel uses of one key exactly one wins; each tenant has its own keys', async () => {
    const results = await parallel(N, () => s.r.replay.use(a, 'jti-1', NOW + 60_000, NOW));
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal(await s.r.replay.use(a, 'jti-1', NOW + 60_000, NOW + 59_999), false, 'still live');
    const foreign = await parallel(N, () => s.r.replay.use(b, 'jti-1', NOW + 60_000, NOW));
    assert.equal(foreign.filter(Boolean).length, 1, "another tenant's use of the same value is its own, once");
  });

  it('replay.use: an expired entry no longer blocks its key, and exactly one caller takes it over', async () => {
    assert.equal(await s.r.replay.use(a, 'jti-2', NOW + 10, NOW), true);
    const results = await parallel(N, () => s.r.replay.use(a, 'jti-2', NOW + 1_000, NOW + 10));
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal(await s.r.replay.use(a, 'jti-2', NOW + 2_000, NOW + 500), false, 'the new entry blocks until it expires');
  });

  it('expired rows are swept every 200 writes, counted across repositories made per transaction', async () => {
    const later = 10 * 3_600_000;
    const old = uid('par');
    await s.r.signinStore.savePar(old, { tenantId: a, clientId: 'cli_a', request: request('cli_a'), expiresAt: NOW, consumedAt: null }, NOW);
    for (let i = 0; i < 200; i++) {
      const par = { tenantId: a, clientId: 'cli_a', request: request('cli_a'), expiresAt: later + 60_000, consumedAt: null };
      await s.db.kysely.transaction().execute((trx) => repos(trx, s.db.dialect).signinStore.savePar(uid('par'), par, later));
    }
    assert.equal(await s.r.signinStore.findPar(a, old), undefined);
  });
});
