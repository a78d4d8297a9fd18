import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_BRAND } from '../../src/screens/brand.js';
import { translator } from '../../src/screens/i18n/index.js';
import { consentPage } from '../../src/screens/pages.js';

describe('consent page', () => {
  it('describes the protocol scopes it knows and shows any other scope by its name, Object property names included', () => {
    const page = String(
      consentPage(
        { title: 'Consent', brand: DEFAULT_BRAND, nonce: 'n', t: translator('en') },
        { csrf: 'c', flow: 'f', clientName: 'App', scopes: ['email', 'constructor', 'toString', 'read:orders'], resources: [] },
      ),
    );
    assert.match(page, /<li>See your email address<\/li>/);
    for (const scope of ['constructor', 'toString', 'read:orders']) assert.match(page, new RegExp(`<li>${scope}</li>`), scope);
    assert.doesNotMatch(page, /native code/);
  });
});
