import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import prettier from 'eslint-config-prettier/flat';
import tseslint from 'typescript-eslint';

// Layer boundaries (docs/architecture.md). A file group's rule lists everything it may not
// import; a later group replaces an earlier one's list for the files it matches.
const DATABASE = ['kysely', 'pg', 'better-sqlite3'].map((name) => ({
  name,
  message: 'Only src/storage/ talks to the database: use a repository (src/storage/repos/) or a type from src/storage/db.ts.',
}));
const FRAMEWORK = {
  group: ['fastify', 'fastify-*', '@fastify/*'],
  message: 'Only src/http/, routes.ts files and the composition root bind to Fastify: keep this code framework-free.',
};
/** Where Fastify may be imported: the HTTP layer, route files, the /v1 plugin with its feature list, and the composition root. */
const HTTP_BINDINGS = [
  'src/http/**',
  'src/**/routes.ts',
  'src/**/*-routes.ts',
  'src/management/v1.ts',
  'src/management/feature.ts',
  'src/management/features.ts',
  'src/server.ts',
  'src/context.ts',
];
/** Protocol cores and the rooms they stand on: framework-free code that serves every surface. */
const CORES = ['oauth', 'signin', 'upstream', 'users', 'sso', 'social', 'connect', 'scim', 'credentials', 'kernel', 'egress', 'events', 'logout'].map(
  (dir) => `src/${dir}/**/*.ts`,
);
/** What each /v1 feature adds to the permission and event catalogues (management/<feature>/catalogue.ts). */
const FEATURE_CATALOGUES = 'src/management/*/catalogue.ts';
/** Two files that import each other, kept out of the ordinary run: test/foundation/lint.test.ts lints them. */
const CYCLE_FIXTURE = 'test/fixtures/lint-cycle/**';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'test/generated/**',
      'console/src/generated/**',
      'packages/*/dist/**',
      'packages/*/src/generated/**',
      CYCLE_FIXTURE,
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Interfaces that join others (the Database of all tables) are intended.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      'no-console': 'off',
    },
  },
  {
    // Protocol cores and services: neither the framework nor the database.
    files: ['src/**/*.ts'],
    ignores: ['src/storage/**', ...HTTP_BINDINGS],
    rules: { 'no-restricted-imports': ['error', { paths: DATABASE, patterns: [FRAMEWORK] }] },
  },
  {
    // HTTP bindings: the framework, never the database.
    files: HTTP_BINDINGS,
    rules: { 'no-restricted-imports': ['error', { paths: DATABASE }] },
  },
  {
    // No import cycles anywhere: a module's imports stand below it.
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // Read TypeScript modules (the plugin reads only .js ones otherwise, and would see no cycle).
      'import-x/extensions': importX.flatConfigs.typescript.settings['import-x/extensions'],
      'import-x/parsers': importX.flatConfigs.typescript.settings['import-x/parsers'],
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: `${import.meta.dirname}/tsconfig.test.json` })],
    },
    rules: { 'import-x/no-cycle': 'error' },
  },
  {
    // Layers: the cores serve every surface, so they import none of them — not the management API,
    // not the HTTP layer, not the composition root. A name both need moves down into the core.
    files: CORES,
    ignores: HTTP_BINDINGS,
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: import.meta.dirname,
          zones: [
            {
              target: './src',
              from: ['./src/http', './src/context.ts'],
              message: 'Protocol cores never import management/, http/ or context.ts (docs/architecture.md): move the shared name down into the core.',
            },
            {
              // A feature's catalogue.ts is data that imports nothing (below): the event catalogue reads it.
              target: './src',
              from: ['./src/management/**'],
              except: [`${import.meta.dirname}/${FEATURE_CATALOGUES}`],
              message: 'Protocol cores never import management/, http/ or context.ts (docs/architecture.md): move the shared name down into the core.',
            },
          ],
        },
      ],
    },
  },
  {
    // What a feature adds to the permission and event catalogues: data only, so that every layer may read it.
    files: [FEATURE_CATALOGUES],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['*'], message: "A feature's catalogue.ts is data only: it imports nothing." }] }] },
  },
  {
    // The single-page app of docs/guides/spa.md runs in a browser.
    files: ['docs/guides/spa/*.js'],
    languageOptions: { globals: { document: 'readonly', location: 'readonly', history: 'readonly', sessionStorage: 'readonly', URLSearchParams: 'readonly' } },
  },
  {
    // Storage: the database, never the framework.
    files: ['src/storage/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [FRAMEWORK] }] },
  },
  // Last: turns off every stylistic rule Prettier owns (`npm run lint` runs prettier --check).
  prettier,
);
