// Lint config. Besides the usual checks it enforces the layers of docs/architecture.md
// ("The layers"), so an import that crosses a boundary fails `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const ioModules = ['fs', 'fs/promises', 'net', 'http', 'https', 'http2', 'child_process', 'dgram', 'tls'];
const noIo = ioModules
  .flatMap((m) => [m, `node:${m}`])
  .map((name) => ({
    name,
    message: 'main/core and main/contract stay pure: do I/O in an adapter (main/store, main/mcp, ...) and inject it.',
  }));
const noElectron = { name: 'electron', message: 'Only main/app/ may import electron.' };

// `as never` and `as unknown as` claim a type the compiler could not check (a partial object passed as a
// whole one); where the MCP SDK's types cannot follow a shape, main/mcp/sdk-shapes.ts names that crossing.
const castMessage =
  'no `as never` / `as unknown as`: narrow the type (a role interface, a type guard, a zod parse, a generic); an MCP SDK shape goes through a named helper in main/mcp/sdk-shapes.ts';
const noBlindCasts = [
  'error',
  { selector: 'TSAsExpression > TSNeverKeyword.typeAnnotation', message: castMessage },
  {
    selector: 'TSAsExpression > TSAsExpression.expression > TSUnknownKeyword.typeAnnotation',
    message: castMessage,
  },
  // the same casts written `<never>x` and `<T>(<unknown>x)`
  { selector: 'TSTypeAssertion > TSNeverKeyword.typeAnnotation', message: castMessage },
  {
    selector: 'TSTypeAssertion > TSTypeAssertion.expression > TSUnknownKeyword.typeAnnotation',
    message: castMessage,
  },
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'dist-renderer/**',
      'dist-tsc/**',
      'coverage/**',
      'test-results/**',
      '**/*.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
        globalThis: 'readonly',
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // bin/*.cjs: CommonJS on purpose (bin/gatehouse.cjs says why).
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['main/**/*.ts', 'cloud/**/*.ts', 'bridge/**/*.ts', 'renderer/**/*.{ts,tsx}'],
    ignores: ['main/mcp/sdk-shapes.ts'],
    rules: { 'no-restricted-syntax': noBlindCasts },
  },
  {
    files: ['main/core/**', 'main/contract/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...noIo, noElectron],
          patterns: [
            {
              regex: '^(\\.\\./)+(store|mcp|plugins|cloud|cloud-client|rest|app)/',
              message: 'core imports only contract, core and main/lib code.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['main/contract/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...noIo, noElectron],
          // main/contract/cloud/ may reach the contract's own lazy-schema.ts, nothing else above it.
          patterns: [{ regex: '^\\.\\./(?!lazy-schema\\.ts$)', message: 'main/contract imports nothing of ours.' }],
        },
      ],
    },
  },
  {
    files: ['main/**'],
    ignores: ['main/app/**', 'main/core/**', 'main/contract/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [noElectron] }] },
  },
  {
    files: ['renderer/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [noElectron],
          patterns: [
            { regex: '(^|/)main/(?!contract(/|$))', message: 'renderer/ may import only main/contract from main/.' },
          ],
        },
      ],
    },
  },
  {
    files: ['bridge/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [noElectron],
          patterns: [
            {
              regex: '(^|/)main/(?!contract(/|$)|store/vault|lib/)',
              message: 'bridge/ may import only main/contract, main/lib and the vault adapter (main/store/vault*).',
            },
          ],
        },
      ],
    },
  },
  {
    // Domain-free helpers shared with core, cloud/ and the bridge: no domain, no adapters, no electron.
    files: ['main/lib/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [noElectron],
          patterns: [
            {
              regex: '^(\\.\\./)+(core|store|mcp|rest|plugins|cloud|cloud-client|app|cli)/',
              message:
                'main/lib/ is domain-free: it imports other main/lib files and main/contract only (core imports lib, never the other way).',
            },
            {
              regex: '^(\\.\\./)+(service|local-core|cli)\\.ts$',
              message: 'main/lib/ must not import the composition roots.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['cloud/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [noElectron],
          patterns: [
            {
              regex: '(^|/)main/(?!contract(/|$)|lib/|version\\.ts$)',
              message: 'cloud/ may import only main/contract, main/lib and main/version.ts.',
            },
          ],
        },
      ],
    },
  },
);
