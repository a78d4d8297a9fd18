// Every module's catalogue.ts (a /v1 feature's permissions and events, or the events of oauth/,
// signin/, console/, tenants/) is read by the permission and event catalogues: a catalogue.ts
// that was written but not joined to a list would leave its events unknown to the recorder's
// readers (webhooks, /v1/events filters) and its permissions to no key.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { EVENT_TYPES, type EventDeclaration } from '../../src/events/catalogue.js';
import { PERMISSIONS } from '../../src/management/permissions.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** The modules' declarations: every catalogue.ts but the two that assemble them and the hosted pages' message catalogue. */
function declarationFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return path === join(SRC, 'screens', 'i18n') ? [] : declarationFiles(path);
    return e.name === 'catalogue.ts' && path !== join(SRC, 'events', 'catalogue.ts') ? [path] : [];
  });
}

interface Declaration {
  permissions?: readonly string[];
  events: Readonly<Record<string, EventDeclaration>>;
}

test('every declared permission and event is in the catalogues, once', async () => {
  const files = declarationFiles(SRC);
  assert.ok(files.length >= 20, `found ${files.length} catalogue.ts files`);
  const permissions: string[] = [];
  const events: string[] = [];
  for (const file of files) {
    const declarations = Object.entries((await import(pathToFileURL(file).href)) as Record<string, Declaration>);
    assert.ok(declarations.length > 0, `${relative(SRC, file)} declares nothing`);
    for (const [name, declaration] of declarations) {
      const where = `${relative(SRC, file)} ${name}`;
      for (const p of declaration.permissions ?? []) {
        assert.ok((PERMISSIONS as readonly string[]).includes(p), `${where}: ${p} is not in PERMISSIONS (management/permissions.ts DECLARED)`);
        permissions.push(p);
      }
      for (const [type, entry] of Object.entries(declaration.events)) {
        assert.deepEqual(
          (EVENT_TYPES as Record<string, EventDeclaration>)[type],
          entry,
          `${where}: ${type} is not in EVENT_TYPES (events/catalogue.ts DECLARED)`,
        );
        events.push(type);
      }
    }
  }
  assert.deepEqual([...permissions].sort(), [...PERMISSIONS].sort(), 'every permission comes from exactly one catalogue.ts');
  assert.deepEqual([...events].sort(), Object.keys(EVENT_TYPES).sort(), 'every event type comes from exactly one catalogue.ts');
  assert.equal(new Set(PERMISSIONS).size, PERMISSIONS.length);
});
