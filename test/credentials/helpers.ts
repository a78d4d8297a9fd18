/**
 * Credential test helpers: holder keys, the OWF wallet (wallet.ts) and an independent SD-JWT VC
 * verifier (@sd-jwt/sd-jwt-vc) that finds the issuer key at /.well-known/jwt-vc-issuer.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { compactVerify, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { didJwkOf, didKeyOf } from '../../src/credentials/did.js';
import { fetchVia } from '../helpers/http.js';
import type { TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';
import { runWallet, type WalletResult } from './wallet.js';

export interface HolderKey {
  alg: 'EdDSA' | 'ES256';
  publicJwk: JWK;
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  didKey: string;
  didJwk: string;
}

export async function holderKey(alg: 'EdDSA' | 'ES256' = 'EdDSA'): Promise<HolderKey> {
  const { publicKey, privateKey } =
    alg === 'EdDSA' ? await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true }) : await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { alg, publicJwk, privateKey, didKey: didKeyOf(publicJwk), didJwk: didJwkOf(publicJwk) };
}

/**
 * A verifier that trusts the keys the issuer publishes at /.well-known/jwt-vc-issuer; it reads
 * that document and the status lists with `fetchImpl` (an https tenant of the test server:
 * `fetchVia(s.port)`).
 */
export async function verifierFor(issuer: string, fetchImpl: typeof fetch = fetch) {
  const meta = (await (await fetchImpl(`${issuer}/.well-known/jwt-vc-issuer`)).json()) as { issuer: string; jwks: { keys: JWK[] } };
  const verify = async (data: string, sig: string) => {
    const header = JSON.parse(Buffer.from(data.split('.')[0]!, 'base64url').toString()) as { kid?: string; alg: string };
    const jwk = meta.jwks.keys.find((k) => k.kid === header.kid);
    if (!jwk) return false;
    try {
      await compactVerify(`${data}.${sig}`, await importJWK(jwk, header.alg));
      return true;
    } catch {
      return false;
    }
  };
  const statusListFetcher = async (uri: string) => {
    const r = await fetchImpl(uri, { headers: { accept: 'application/statuslist+jwt' } });
    if (!r.ok) throw new Error(`status list ${uri}: ${r.status}`);
    return r.text();
  };
  return { meta, sdjwt: new SDJwtVcInstance({ verifier: verify, hasher: digest, hashAlg: 'sha-256', statusListFetcher }) };
}

export interface Org {
  api: Api;
  orgId: string;
  userId: string;
  email: string;
}

/** An organization with one member (role admin). */
export async function orgWithMember(s: TestServer, api: Api = v1(s, s.tenant.platformApiKey)): Promise<Org> {
  const orgId = (await api('POST', '/organizations', { name: 'Acme Corp' })).json().id as string;
  const email = `ada-${randomBytes(4).toString('hex')}@acme.example`;
  const u = await api('POST', '/users', { email, name: 'Ada' });
  if (u.status !== 201) throw new Error(u.text);
  const userId = u.json().id as string;
  const m = await api('POST', `/organizations/${orgId}/members`, { user_id: userId, role: 'admin' });
  if (m.status !== 201) throw new Error(m.text);
  return { api, orgId, userId, email };
}

export async function membershipOffer(o: Org, txCode = true) {
  const r = await o.api('POST', `/organizations/${o.orgId}/credentials/offers`, {
    credential_configuration_id: 'OrganizationMembership',
    subject: { user_id: o.userId },
    ...(txCode ? { tx_code: { length: 6, input_mode: 'numeric' } } : {}),
  });
  if (r.status !== 201) throw new Error(r.text);
  return r.json() as {
    offer_id: string;
    credential_offer_uri: string;
    credential_offer_link: string;
    credential_offer: Record<string, unknown>;
    tx_code: string | null;
    expires_in: number;
  };
}

const walletProgram = path.join(import.meta.dirname, 'wallet-process.ts');

/** The OWF wallet in a process of its own, in developer mode (wallet-process.ts): for http issuers. */
export async function walletProcess(link: string, txCode: string | null, key: HolderKey): Promise<WalletResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', walletProgram], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  child.stdin.end(JSON.stringify({ link, tx_code: txCode, alg: key.alg, private_jwk: await exportJWK(key.privateKey) }));
  if ((await exited) !== 0) throw new Error(`the wallet failed: ${err}`);
  return JSON.parse(out) as WalletResult;
}

/** The issuer an offer link names (its credential_offer_uri, or the offer by value). */
function offerIssuer(link: string): string {
  const params = new URL(link).searchParams;
  const byRef = params.get('credential_offer_uri');
  if (byRef) return new URL(byRef).origin;
  return (JSON.parse(params.get('credential_offer') ?? '{}') as { credential_issuer: string }).credential_issuer;
}

/**
 * The wallet receives the credential of an offer link: in this process for an https issuer
 * (reached on the test server through fetchVia), in a wallet process for an http one.
 */
export async function receiveCredential(s: TestServer, link: string, txCode: string | null, key: HolderKey): Promise<{ res: WalletResult }> {
  const https = offerIssuer(link).startsWith('https:');
  const res = https ? await runWallet({ link, txCode, key, fetch: fetchVia(s.port) }) : await walletProcess(link, txCode, key);
  return { res };
}
