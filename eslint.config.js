// Lint rules for the whole repo: typescript-eslint's recommended set without type information
// (type-aware rules cost a full program build per run), React's hook rules (the compiler-based
// ones included) for the Ink UI, and formatting left to prettier (see .prettierrc).
import js from '@eslint/js'
import { defineConfig } from 'eslint/config'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import tseslint from 'typescript-eslint'

/**
 * The layers (docs/architecture.md): commands → src → flows, pdk; inside src: ui → services → broker →
 * config, errors, log, redact. An import that runs the other way fails lint. Specifiers are matched as
 * written (relative paths), so each block names the folders its files may not climb back into.
 * Tests may reach across to set things up.
 */
const layer = (files, folders, why) => ({
  files,
  ignores: ['**/*.test.ts', '**/*.test.tsx'],
  rules: {
    'no-restricted-imports': ['error', { patterns: [{ regex: `^(\\.{1,2}/)+(${folders.join('|')})/`, message: why }] }],
  },
})

export default defineConfig(
  { ignores: ['dist/', 'coverage/', '.tmp/', 'docs/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  layer(
    ['flows/**/*.ts'],
    ['src', 'commands', 'pdk', 'bin'],
    'flow plugins sit below the broker: they get what they need in their context',
  ),
  layer(
    ['pdk/**/*.ts'],
    ['src', 'commands', 'flows', 'bin'],
    'the kit sits below src/: services call it, never the other way',
  ),
  layer(
    ['src/config/**/*.ts', 'src/errors/**/*.ts', 'src/log.ts', 'src/redact.ts'],
    ['broker', 'services', 'ui', 'cli', 'commands'],
    'config, errors, log and redact are the bottom of src/: they import nothing above them',
  ),
  layer(
    ['src/broker/**/*.ts'],
    ['services', 'ui', 'cli', 'commands'],
    'the broker core never imports services, the UI or the CLI',
  ),
  layer(
    ['src/services/**/*.ts'],
    ['ui', 'cli', 'commands'],
    'services never import the UI or the CLI: the command hands the UI in',
  ),
  layer(['src/ui/**/*.{ts,tsx}'], ['cli', 'commands'], 'the UI never imports the CLI'),
  {
    files: ['src/ui/**/*.{ts,tsx}'],
    extends: [reactHooks.configs.flat.recommended],
    rules: { 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    // Plugins as users write them: CommonJS, which kong-js-pdk and the flow contract accept.
    files: ['fixtures/flows/**/*.js', 'fixtures/pdk/plugins/js-*/**/*.js', 'fixtures/pdk/plugins/kong-style/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
)
