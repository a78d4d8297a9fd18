/**
 * The boundaries of docs/architecture.md hold by lint: an import cycle fails it, and so does a
 * protocol core importing the management API, the HTTP layer or the composition root. The
 * project's own eslint.config.js is what runs, on deliberate violations, and on src/ itself.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';

const root = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: root });

/** The rule ids of the errors ESLint reports for `code` as if it were the file `filePath`. */
async function errorsOf(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
  return result!.messages.filter((m) => m.severity === 2).map((m) => m.ruleId ?? m.message);
}

describe('lint boundaries', () => {
  it('fails on an import cycle', async () => {
    // The fixture is outside the ordinary run (an ignore pattern); this run reads it anyway.
    const results = await new ESLint({ cwd: root, ignore: false }).lintFiles(['test/fixtures/lint-cycle/ping.ts', 'test/fixtures/lint-cycle/pong.ts']);
    for (const r of results) {
      assert.deepEqual(
        r.messages.map((m) => m.ruleId),
        ['import-x/no-cycle'],
        r.filePath,
      );
    }
  });

  it('fails when a core imports management/, http/ or context.ts; a route file may use http/', async () => {
    const imports: Array<[string, string]> = [
      ["import { principalOf } from '../management/principal.js';", 'src/users/violation.ts'],
      ["import { tenantOf } from '../http/tenant.js';", 'src/users/violation.ts'],
      ["import { createContext } from '../../context.js';", 'src/oauth/token/violation.ts'],
      ["import { userView } from '../management/users/views.js';", 'src/scim/violation.ts'],
      ["import { send } from '../http/scim.js';", 'src/sso/violation.ts'],
      ["import { tenantOf } from '../../http/tenant.js';", 'src/kernel/crypto/violation.ts'],
    ];
    for (const [line, file] of imports) {
      const name = /\{ (\w+) \}/.exec(line)![1];
      assert.deepEqual(await errorsOf(`${line}\nexport const used = [${name}];\n`, file), ['import-x/no-restricted-paths'], `${file}: ${line}`);
    }
    assert.deepEqual(await errorsOf("import { send } from '../http/scim.js';\nexport const used = [send];\n", 'src/scim/violation-routes.ts'), []);
    assert.deepEqual(
      await errorsOf("import { normalizeEmail } from '../users/emails.js';\nexport const used = [normalizeEmail];\n", 'src/sso/violation.ts'),
      [],
    );
  });

  it('finds nothing in src/', async () => {
    const results = await eslint.lintFiles(['src']);
    const problems = results.flatMap((r) =>
      r.messages.filter((m) => m.severity === 2).map((m) => `${path.relative(root, r.filePath)}:${m.line} ${m.ruleId}: ${m.message}`),
    );
    assert.deepEqual(problems, []);
    assert.ok(results.length > 200, `linted ${results.length} files`);
  });
});
