// Flat ESLint config. The layer rule below is the dependency direction of STYLE.md:
// core ← config ← db ← catalog ← tools ← {mcp, llm ← api} ← http ← cli, and
// db ← state ← {auth, llm, api, http, cli} and auth ← {api, http, cli}.
// testing/ holds builders for tests only; nothing in the product imports it, the unit tests
// beside the code (*.test.ts) may. Imports name the compiled .js; the resolver finds the .ts
// behind them, without which the rule could not tell where an import leads and would pass all.
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import { builtinModules } from 'node:module';

const layers = {
  core: [],
  config: ['core'],
  db: ['core', 'config'],
  embeddings: ['core', 'config'],
  catalog: ['core', 'config', 'db'],
  tools: ['core', 'config', 'db', 'catalog', 'embeddings'],
  state: ['core', 'config', 'db'],
  auth: ['core', 'config', 'db', 'state'],
  llm: ['core', 'config', 'db', 'catalog', 'tools', 'state', 'embeddings'],
  mcp: ['core', 'config', 'db', 'catalog', 'tools', 'embeddings'],
  api: ['core', 'config', 'db', 'catalog', 'tools', 'state', 'auth', 'llm', 'embeddings'],
  http: [
    'core',
    'config',
    'db',
    'catalog',
    'tools',
    'state',
    'auth',
    'mcp',
    'api',
    'llm',
    'embeddings',
  ],
  cli: [
    'core',
    'config',
    'db',
    'catalog',
    'tools',
    'state',
    'auth',
    'mcp',
    'api',
    'llm',
    'http',
    'embeddings',
  ],
  testing: ['core', 'config', 'db', 'catalog', 'tools', 'mcp', 'llm', 'embeddings'],
};
const all = Object.keys(layers);
const zones = all.flatMap((layer) =>
  all
    .filter((other) => other !== layer && !layers[layer].includes(other))
    .map((other) => ({
      target: `./src/${layer}`,
      from: `./src/${other}`,
      message: `src/${layer} may not import src/${other} (see STYLE.md, dependency direction).`,
    })),
);

const nodePrefixPaths = builtinModules
  .filter((m) => !m.startsWith('_') && !m.includes('/'))
  .map((name) => ({ name, message: `Use the node: prefix (node:${name}).` }));

export default tseslint.config(
  {
    ignores: [
      '.tmp/**',
      'bench/results/**',
      'dist/**',
      'node_modules/**',
      'coverage/**',
      '.node22/**',
      'web/**',
      '.pgmcp/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mjs', '**/*.js'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones }],
      'no-restricted-imports': ['error', { paths: nodePrefixPaths }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'error',
    },
  },
  {
    // Below the composition root only OpenTelemetry's API (a no-op until cli/ registers the SDK).
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodePrefixPaths,
          patterns: [
            {
              group: ['@opentelemetry/*', '!@opentelemetry/api'],
              message: 'Only cli/ sets up the OpenTelemetry SDK; use @opentelemetry/api here.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cli/**', 'bench/**', 'scripts/**', 'test/**', 'examples/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['src/**/*.test.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        { zones: zones.filter((zone) => zone.from !== './src/testing') },
      ],
    },
  },
  {
    files: ['src/**/*.test.ts', 'test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
