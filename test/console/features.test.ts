import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { EgressResolver } from '../../src/egress/policy.js';
import { type VaultBed, vaultBedOn } from '../connect/helpers.js';
import { holderKey, receiveCredential } from '../credentials/helpers.js';
import { type Api, v1 } from '../helpers/v1.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CHROMIUM } from '../mfa/browser-helpers.js';
import { accessible, buildConsole, consolePage, noHorizontalScroll, setUpAdministrator, shot } from './browser-helpers.js';
import { startTestIdp } from '../sso/saml-idp.js';
import { PASSWORD } from './helpers.js';

const ADMIN = 'root@features.test';
const NO_CHROMIUM = !existsSync(CHROMIUM) && 'no Chromium at /usr/bin/chromium';

/** Public names resolve to a public address (registration checks them; nothing is sent there); `localhost` is the upstream tenant. */
const resolver: EgressResolver = async (host) => {
  if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  if (host.endsWith('.example') || host.endsWith('.com')) return [{ address: '93.184.215.14', family: 4 }];
  throw new Error('ENOTFOUND');
};

// The screens of the later features (issue 18) with the built assets, a real server and Chromium:
// connected accounts, credentials, SSO connections, the MFA policy.
describe('console: connected accounts, credentials, SSO, MFA policy', () => {
  let s: TestServer;
  let api: Api;
  let bed: VaultBed;
  let browser: Browser | undefined;
  let page: Page;
  const cspViolations: string[] = [];
  const nav = async (name: string) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
  };
  const adminId = async () => (await api('GET', `/users?email=${encodeURIComponent(ADMIN)}`)).json().data[0].id as string;

  before(async () => {
    buildConsole();
    s = await startTestServer({ egressResolver: resolver, config: { egressAllow: '127.0.0.1/32' } });
    api = v1(s, s.tenant.platformApiKey);
    // An upstream OAuth provider (another tenant of this server), the organization Acme and a member.
    bed = await vaultBedOn(s);
    if (!existsSync(CHROMIUM)) return;
    ({ browser, page } = await consolePage(cspViolations));
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('signs the first administrator in through the setup link and the hosted login', { skip: NO_CHROMIUM }, async () => {
    await setUpAdministrator(page, s, ADMIN, PASSWORD);
  });

  it('connected accounts: registers, edits and deletes a provider (secret write-only); views and disconnects an account', { skip: NO_CHROMIUM }, async () => {
    const user = await bed.createUserPair('grace');
    const accountId = await bed.connect(user.email, user.upstreamEmail);

    await nav('Connected accounts');
    await page.getByRole('button', { name: /^Upstream Keyhall oidc/ }).waitFor();
    const SECRET = 'upstream-secret-from-the-console-0123';
    await page.getByLabel('Name', { exact: true }).fill('Example API');
    await page.getByLabel('Authorization endpoint', { exact: true }).fill('https://auth.example/authorize');
    await page.getByLabel('Token endpoint', { exact: true }).fill('https://auth.example/token');
    await page.getByLabel('Client ID').fill('keyhall-client');
    await page.getByLabel('Client secret', { exact: true }).fill(SECRET);
    await page.getByLabel('Scopes (space-separated)').fill('read write');
    // A parameter Keyhall sets itself is refused with the API's error_description.
    await page.getByLabel(/Extra authorization parameters/).fill('state = mine');
    await page.getByRole('button', { name: 'Register provider' }).click();
    await page.getByRole('alert').filter({ hasText: 'are set by Keyhall' }).waitFor();
    await page.getByLabel(/Extra authorization parameters/).fill('access_type = offline');
    await page.getByRole('button', { name: 'Register provider' }).click();
    await page.getByText('Provider Example API registered.').waitFor();
    const created = (await api('GET', '/connect/providers')).json().data.find((p: { name: string }) => p.name === 'Example API');
    assert.equal(created.has_client_secret, true);
    assert.deepEqual(created.scopes, ['read', 'write']);
    assert.deepEqual(created.authorize_params, { access_type: 'offline' });
    // The new provider is open: its redirect URI to register upstream; the secret is nowhere.
    await page.getByText(created.redirect_uri).waitFor();
    assert.equal((await page.content()).includes(SECRET), false, 'the client secret is never shown');

    // Edit: only what changed is sent.
    await page.getByLabel('Name', { exact: true }).nth(1).fill('Example API v2');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await page.getByText('Provider Example API v2 saved.').waitFor();
    const edited = (await api('GET', `/connect/providers/${created.provider_id}`)).json();
    assert.equal(edited.name, 'Example API v2');
    assert.equal(edited.has_client_secret, true, 'a blank secret field keeps the secret');

    // A provider accounts use cannot be deleted: the API's 409 is shown.
    const upstreamRow = page.getByRole('listitem').filter({ has: page.getByRole('button', { name: /^Upstream Keyhall oidc/ }) });
    await upstreamRow.getByRole('button', { name: 'Delete' }).click();
    await upstreamRow.getByRole('button', { name: 'Yes, delete' }).click();
    await upstreamRow.getByRole('alert').filter({ hasText: 'remove them first' }).waitFor();
    await upstreamRow.getByRole('button', { name: 'Cancel' }).click();
    // An OpenID Connect provider's endpoints are discovered: editing its name sends none of them.
    await upstreamRow.getByRole('button', { name: /^Upstream Keyhall oidc/ }).click();
    await page.getByLabel('Name', { exact: true }).nth(1).fill('Upstream Keyhall tenant');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await page.getByText('Provider Upstream Keyhall tenant saved.').waitFor();
    assert.equal((await api('GET', `/connect/providers/${bed.providerId}`)).json().name, 'Upstream Keyhall tenant');

    // The organization's accounts: the member's account, its details, then disconnect.
    const accountRow = page.getByRole('listitem').filter({ has: page.getByRole('button', { name: new RegExp(user.email) }) });
    await accountRow.getByRole('button', { name: new RegExp(user.email) }).click();
    await page.getByRole('heading', { name: `Account ${accountId}` }).waitFor();
    await page.getByText(user.userId, { exact: true }).waitFor();
    // Tokens stay with API keys: the console offers no way to retrieve one.
    assert.equal(await page.getByRole('button', { name: /token/i }).count(), 0);
    await shot(page, 'features-01-connected-accounts');
    await accessible(page, 'connected accounts');
    await accountRow.getByRole('button', { name: 'Disconnect' }).click();
    await accountRow.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await api('GET', `/organizations/${bed.orgId}/connect/accounts/${accountId}`)).status, 200, 'cancel disconnects nothing');
    await accountRow.getByRole('button', { name: 'Disconnect' }).click();
    await accountRow.getByRole('button', { name: 'Yes, disconnect' }).click();
    await page.getByText('No connected accounts here.').waitFor();
    const gone = await api('GET', `/organizations/${bed.orgId}/connect/accounts/${accountId}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.json().error, 'account_not_found');
    const removed = (await api('GET', '/events?types=connected_account.disconnected')).json().data[0];
    assert.deepEqual(removed.actor, { type: 'user', id: await adminId() });

    // Delete the edited provider after confirmation.
    const exampleRow = page.getByRole('listitem').filter({ has: page.getByRole('button', { name: /Example API v2/ }) });
    await exampleRow.getByRole('button', { name: 'Delete' }).click();
    await exampleRow.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('Provider Example API v2 deleted.').waitFor();
    assert.equal((await api('GET', `/connect/providers/${created.provider_id}`)).status, 404);
  });

  it(
    'credentials: defines a type, makes an offer with a QR code, a wallet redeems it, the credential is revoked after confirmation',
    { skip: NO_CHROMIUM },
    async () => {
      await nav('Credentials');
      await page.getByText('OrganizationMembership').first().waitFor();
      await page.getByLabel('Identifier (credential_configuration_id)').fill('EmployeeBadge');
      await page.getByLabel("vct (the type's URI)").fill('https://acme.example/credentials/EmployeeBadge');
      await page.getByLabel('Display name', { exact: true }).fill('Employee badge');
      await page.getByLabel('Claim 1 name').fill('iss');
      await page.getByRole('button', { name: 'Create credential type' }).click();
      await page.getByRole('alert').filter({ hasText: 'claim names may not be' }).waitFor();
      await page.getByLabel('Claim 1 name').fill('employee_id');
      await page.getByRole('button', { name: 'Add a claim' }).click();
      await page.getByLabel('Claim 2 name').fill('level');
      await page.getByLabel('Claim 2 type').selectOption('number');
      await page.getByRole('button', { name: 'Create credential type' }).click();
      await page.getByText('Credential type EmployeeBadge created.').waitFor();
      const type = (await api('GET', '/credential_types')).json().data.find((t: { id: string }) => t.id === 'EmployeeBadge');
      assert.deepEqual(type.claims, { employee_id: { type: 'string', mandatory: true }, level: { type: 'number', mandatory: false } });

      // An offer for the organization Acme, with a transaction code.
      await page.getByLabel('Credential type', { exact: true }).selectOption('EmployeeBadge');
      await page.getByLabel('employee_id').fill('E-1024');
      await page.getByLabel('level (optional)').fill('3');
      await page.getByRole('button', { name: 'Make offer' }).click();
      const qr = page.getByRole('img', { name: 'QR code of the credential offer link' });
      await qr.waitFor();
      assert.match(String(await qr.getAttribute('src')), /^data:image\/svg\+xml;charset=utf-8,%3Csvg/);
      // The image decodes (a data: URL the CSP allows): its natural size is the SVG's.
      await page.waitForFunction(`document.querySelector('img[alt="QR code of the credential offer link"]').naturalWidth > 0`, undefined, { timeout: 5000 });
      const txCode = await page.getByRole('textbox', { name: 'Transaction code for the holder' }).inputValue();
      assert.match(txCode, /^\d{6}$/);
      const link = (await page.getByText(/^openid-credential-offer:\/\//).innerText()).trim();
      assert.match(link, new RegExp(`credential_offer_uri=${encodeURIComponent(`${s.tenant.tenant.issuer}/credentials/offers/`)}`));
      await page.getByText(`${s.tenant.tenant.issuer}/credentials/offers/`, { exact: false }).first().waitFor();
      await shot(page, 'features-02-credential-offer');
      await accessible(page, 'credentials with an offer');

      // A wallet scans the link and receives the credential.
      const { res } = await receiveCredential(s, link, txCode, await holderKey());
      assert.equal(res.ok, true, JSON.stringify(res));
      assert.equal((res as { credentialResponse: { credentials: unknown[] } }).credentialResponse.credentials.length, 1);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await page.getByRole('button', { name: 'Refresh' }).click();
      const row = page.locator('tr[data-status="valid"]').filter({ hasText: 'EmployeeBadge' });
      await row.waitFor();
      const issued = (await api('GET', `/organizations/${bed.orgId}/credentials`)).json().data[0];
      await row.getByRole('button', { name: 'Details' }).click();
      await page.getByRole('heading', { name: `Credential ${issued.id}` }).waitFor();
      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await api('GET', `/organizations/${bed.orgId}/credentials/${issued.id}`)).json().status, 'valid', 'cancel revokes nothing');
      await row.getByRole('button', { name: 'Revoke' }).click();
      await shot(page, 'features-03-credential-revoke');
      await accessible(page, 'credentials asking to revoke');
      await row.getByRole('button', { name: 'Yes, revoke' }).click();
      await page.locator('tr[data-status="revoked"]').filter({ hasText: 'EmployeeBadge' }).waitFor();
      const revoked = (await api('GET', `/organizations/${bed.orgId}/credentials/${issued.id}`)).json();
      assert.equal(revoked.status, 'revoked');
      assert.ok(revoked.revoked_at);

      // A type is deleted after confirmation; the built-in one offers no delete.
      const typeRow = page.getByRole('listitem').filter({ hasText: 'Employee badge' });
      await typeRow.getByRole('button', { name: 'Delete' }).click();
      await typeRow.getByRole('button', { name: 'Yes, delete' }).click();
      await page.getByText('Credential type EmployeeBadge deleted.').waitFor();
      assert.equal(await page.getByRole('listitem').filter({ hasText: 'OrganizationMembership' }).getByRole('button', { name: 'Delete' }).count(), 0);
      assert.equal(
        (await api('GET', '/credential_types')).json().data.some((t: { id: string }) => t.id === 'EmployeeBadge'),
        false,
      );

      // The built-in membership credential is offered to a member, here without a transaction code.
      const grace = (await api('GET', `/users?email=${encodeURIComponent('grace@acme.example')}`)).json().data[0];
      await page.getByLabel('Credential type', { exact: true }).selectOption('OrganizationMembership');
      await page.getByLabel('Member', { exact: true }).selectOption(grace.id);
      await page.getByRole('checkbox', { name: /Require a transaction code/ }).uncheck();
      await page.getByRole('button', { name: 'Make offer' }).click();
      await page.getByRole('img', { name: 'QR code of the credential offer link' }).waitFor();
      assert.equal(await page.getByRole('textbox', { name: 'Transaction code for the holder' }).count(), 0);
      const made = (await api('GET', '/events?types=credential.offer.created'))
        .json()
        .data.find((e: { data: { user_id: string | null } }) => e.data.user_id === grace.id);
      assert.equal(made.data.credential_configuration_id, 'OrganizationMembership');
      await page.getByRole('button', { name: 'Close the offer' }).click();
      assert.equal(await page.getByRole('img', { name: 'QR code of the credential offer link' }).count(), 0);
    },
  );

  it(
    'SSO: a refused OIDC issuer shows the error; creates OIDC and SAML connections and shows what the IdP needs; edits and deletes them',
    { skip: NO_CHROMIUM },
    async () => {
      const idp = await startTestIdp();
      await nav('SSO');
      await page.getByText('No SSO connections in this organization.').waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Acme Okta');
      await page.getByLabel('Issuer').fill('http://127.0.0.1:9/nowhere');
      await page.getByLabel('Client ID').fill('okta-client');
      await page.getByRole('button', { name: 'Create connection' }).click();
      await page.getByRole('alert').filter({ hasText: 'issuer:' }).waitFor();

      // A group line without "= role" is caught before anything is sent.
      await page.getByLabel(/Group roles/).fill('Admins');
      await page.getByRole('button', { name: 'Create connection' }).click();
      await page.getByRole('alert').filter({ hasText: 'Group roles: write each line as name = value' }).waitFor();
      await page.getByLabel(/Group roles/).fill('');

      // OpenID Connect against a real issuer (the other tenant of this server): the redirect URI to
      // register is shown, the client secret never; then the secret is removed.
      const OIDC_SECRET = 'okta-client-secret-0123456789';
      await page.getByLabel('Issuer').fill(bed.upstream.tenant.issuer);
      await page.getByLabel('Client secret (optional)').fill(OIDC_SECRET);
      await page.getByRole('button', { name: 'Create connection' }).click();
      await page.getByText('Connection Acme Okta created.').waitFor();
      const o = (await api('GET', `/organizations/${bed.orgId}/sso/connections`)).json().data.find((x: { protocol: string }) => x.protocol === 'oidc');
      assert.equal(o.oidc.has_client_secret, true);
      assert.equal(o.oidc.redirect_uri, `${s.tenant.tenant.issuer}/sso/oidc/${o.id}/callback`);
      await page.getByText(o.oidc.redirect_uri, { exact: true }).waitFor();
      assert.equal((await page.content()).includes(OIDC_SECRET), false, 'the client secret is never shown');
      await page.getByRole('checkbox', { name: 'Remove the client secret' }).check();
      await page.getByRole('button', { name: 'Save connection' }).click();
      await page.getByText('Connection Acme Okta saved.').waitFor();
      assert.equal((await api('GET', `/organizations/${bed.orgId}/sso/connections/${o.id}`)).json().oidc.has_client_secret, false);
      const changedOf = async (id: string) =>
        (await api('GET', '/events?types=sso.connection.updated'))
          .json()
          .data.filter((e: { data: { connection_id: string } }) => e.data.connection_id === id)
          .map((e: { data: { fields: string[] } }) => e.data.fields);
      assert.deepEqual(await changedOf(o.id), [['oidc.client_secret']], 'only what changed is sent');

      // SAML from the IdP's metadata (the create form comes first; the OIDC connection is open below).
      await page.getByRole('radio', { name: 'SAML 2.0' }).check();
      await page.getByLabel('Name', { exact: true }).first().fill('Acme Entra');
      await page.getByLabel('Metadata XML').fill(idp.metadataXml);
      await page
        .getByLabel(/Group roles/)
        .first()
        .fill('Admins = admin');
      await page.getByLabel('Attribute carrying the groups').fill('memberOf');
      await page.getByRole('button', { name: 'Create connection' }).click();
      await page.getByText('Connection Acme Entra created.').waitFor();
      const c = (await api('GET', `/organizations/${bed.orgId}/sso/connections`)).json().data.find((x: { protocol: string }) => x.protocol === 'saml');
      assert.equal(c.protocol, 'saml');
      assert.equal(c.saml.idp_entity_id, idp.entityId);
      assert.deepEqual(c.group_roles, { admins: 'admin' });
      assert.equal(c.saml.attributes.groups, 'memberOf');
      await page.getByText(c.saml.acs_url, { exact: true }).waitFor();
      await page.getByText(c.saml.sp_entity_id, { exact: true }).first().waitFor();
      await page.getByRole('link', { name: c.saml.sp_metadata_url }).waitFor();
      await shot(page, 'features-04-sso');
      await accessible(page, 'sso');

      await page
        .getByRole('checkbox', { name: /Enabled/ })
        .nth(1)
        .uncheck();
      await page.getByRole('button', { name: 'Save connection' }).click();
      await page.getByText('Connection Acme Entra saved.').waitFor();
      const patched = (await api('GET', `/organizations/${bed.orgId}/sso/connections/${c.id}`)).json();
      assert.equal(patched.enabled, false);
      assert.equal(patched.saml.idp_entity_id, idp.entityId, 'the metadata is kept');
      assert.deepEqual(await changedOf(c.id), [['enabled']], 'only what changed is sent');

      const item = page.getByRole('listitem').filter({ has: page.getByRole('button', { name: /Acme Entra/ }) });
      await item.getByRole('button', { name: 'Delete' }).click();
      await item.getByRole('button', { name: 'Yes, delete' }).click();
      await page.getByText('Connection Acme Entra deleted.').waitFor();
      assert.equal((await api('GET', `/organizations/${bed.orgId}/sso/connections/${c.id}`)).status, 404);
    },
  );

  it('MFA policy: sets the tenant policy and an organization policy, then clears it', { skip: NO_CHROMIUM }, async () => {
    await nav('MFA policy');
    await page.getByText('Never set: the default (optional) applies.').waitFor();
    const tenantForm = page.getByRole('form', { name: 'Tenant policy' });
    await tenantForm.getByRole('radio', { name: /^off/ }).check();
    await tenantForm.getByRole('button', { name: 'Save tenant policy' }).click();
    await page.getByText('Tenant policy saved: off.').waitFor();
    assert.equal((await api('GET', '/mfa_policy')).json().policy, 'off');

    const orgForm = page.getByRole('form', { name: "This organization's policy" });
    await orgForm.getByText('(now off)').waitFor();
    await orgForm.getByRole('radio', { name: /^required/ }).check();
    await orgForm.getByRole('button', { name: 'Save organization policy' }).click();
    await page.getByText('Organization policy saved: required.').waitFor();
    await orgForm.getByText('In effect for its members: required').waitFor();
    const org = (await api('GET', `/organizations/${bed.orgId}/mfa_policy`)).json();
    assert.equal(org.policy, 'required');
    assert.equal(org.effective_policy, 'required');
    await shot(page, 'features-05-mfa-policy');
    await accessible(page, 'mfa policy');

    await orgForm.getByRole('radio', { name: /Follow the tenant/ }).check();
    await orgForm.getByRole('button', { name: 'Save organization policy' }).click();
    await page.getByText('Organization policy cleared: its members follow the tenant (off).').waitFor();
    const cleared = (await api('GET', `/organizations/${bed.orgId}/mfa_policy`)).json();
    assert.equal(cleared.policy, null);
    assert.equal(cleared.effective_policy, 'off');
    const events = (await api('GET', '/events?types=mfa_policy.updated')).json().data;
    assert.equal(events.length, 3);
    for (const e of events) assert.deepEqual(e.actor, { type: 'user', id: await adminId() });
  });

  it('the new screens are usable at 390 px wide, and nothing broke the CSP', { skip: NO_CHROMIUM }, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, file] of [
      ['Connected accounts', 'features-06-connected-accounts-390'],
      ['Credentials', 'features-07-credentials-390'],
      ['SSO', 'features-08-sso-390'],
      ['MFA policy', 'features-09-mfa-policy-390'],
    ] as const) {
      await nav(name);
      await page.waitForLoadState('networkidle');
      await shot(page, file);
      await noHorizontalScroll(page, `${name} at 390 px`);
    }
    await accessible(page, 'mfa policy at 390 px');
    assert.deepEqual(cspViolations, []);
  });
});
