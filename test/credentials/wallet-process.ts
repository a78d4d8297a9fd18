/**
 * The wallet of wallet.ts as a program of its own, in developer mode: it talks to an http
 * issuer (`http://localhost:3000`, the quick start's), which the OWF library allows only with its
 * process-wide `allowInsecureUrls`. That switch is set here, in the wallet's process, where no
 * server runs; the server under test never sees it. Reads {link, tx_code, alg, private_jwk} on
 * stdin, prints the WalletResult as JSON on stdout.
 */
import { setGlobalConfig } from '@openid4vc/oauth2';
import { importJWK, type JWK } from 'jose';
import { runWallet } from './wallet.js';

setGlobalConfig({ allowInsecureUrls: true });

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { link: string; tx_code: string | null; alg: 'EdDSA' | 'ES256'; private_jwk: JWK };
const { d: _d, ...publicJwk } = input.private_jwk;
const privateKey = await importJWK(input.private_jwk, input.alg);
const result = await runWallet({ link: input.link, txCode: input.tx_code, key: { alg: input.alg, publicJwk, privateKey } });
process.stdout.write(JSON.stringify(result));
