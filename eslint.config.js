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
 * config, errors, log, redact; util below them all. An import that runs the other way fails lint.
 * Specifiers are matched as written (relative paths), so each block names the folders its files may not
 * climb back into. A later block replaces an earlier one's list for the files both match, so the blocks
 * inside pdk/ repeat pdk/'s own. Tests may reach across to set things up.
 */
const layer = (files, ...patterns) => ({
  files,
  ignores: ['**/*.test.ts', '**/*.test.tsx'],
  rules: { 'no-restricted-imports': ['error', { patterns }] },
})
/** An import of any of `folders` (reached by ./ or ../ steps) is refused with `message`. */
const climb = (folders, message) => ({ regex: `^(\\.{1,2}/)+(${folders.join('|')})/`, message })

const PDK_BELOW_SRC = climb(
  ['src', 'commands', 'flows', 'bin'],
  'the kit sits below src/: services call it, never the other way',
)
// pdk/ inside: the kit (Kong's PDK) at the bottom, the fixture model on it, then what the two JS faces
// share (external/), the faces (a face never imports another), the runner on top
const FACES = ['js', 'plugin-server', 'lua']
const KIT_BELOW = climb(
  [...FACES, 'external', 'runner', 'spec-runner'],
  "the kit is Kong's PDK: the faces and the runner call it, never the other way",
)

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
    ['util/**/*.ts'],
    climb(['src', 'commands', 'flows', 'pdk', 'bin'], 'util/ is below src/ and pdk/ alike: it imports neither'),
  ),
  layer(
    ['flows/**/*.ts'],
    climb(
      ['src', 'commands', 'pdk', 'bin'],
      'flow plugins sit below the broker: they get what they need in their context',
    ),
  ),
  layer(['pdk/**/*.ts'], PDK_BELOW_SRC),
  layer(['pdk/kit/**/*.ts'], PDK_BELOW_SRC, KIT_BELOW, {
    regex: '^(\\.{1,2}/)+fixture/(?!fixture-types\\.generated\\.js$)',
    message: 'the kit reads a fixture only through its generated types: fixture/ builds on the kit',
  }),
  layer(
    ['pdk/fixture/**/*.ts'],
    PDK_BELOW_SRC,
    climb([...FACES, 'external', 'runner', 'spec-runner'], 'the fixture model sits below the faces and the runner'),
  ),
  layer(
    ['pdk/external/**/*.ts'],
    PDK_BELOW_SRC,
    climb([...FACES, 'runner', 'spec-runner'], 'external/ is what the JS faces share: it imports none of them'),
  ),
  ...FACES.map((face) =>
    layer(
      [`pdk/${face}/**/*.ts`],
      PDK_BELOW_SRC,
      climb(
        [...FACES.filter((f) => f !== face), 'runner'],
        'a face never imports another face or the runner: what faces share sits in external/, kit/ or fixture/',
      ),
    ),
  ),
  {
    // the runner replays plugin handlers (kit/private/handler.ts): only its loader, plugins.ts, knows the faces
    ...layer(
      ['pdk/runner/**/*.ts'],
      PDK_BELOW_SRC,
      climb(FACES, 'the runner sees plugins only as handlers: a face is loaded in runner/plugins.ts alone'),
    ),
    ignores: ['**/*.test.ts', 'pdk/runner/plugins.ts'],
  },
  layer(
    ['src/config/**/*.ts', 'src/errors/**/*.ts', 'src/log.ts', 'src/notice.ts', 'src/redact.ts'],
    climb(
      ['broker', 'services', 'ui', 'cli', 'commands'],
      'config, errors, log and redact are the bottom of src/: they import nothing above them',
    ),
  ),
  layer(
    ['src/broker/**/*.ts'],
    climb(['services', 'ui', 'cli', 'commands'], 'the broker core never imports services, the UI or the CLI'),
  ),
  layer(
    ['src/broker/flow/**/*.ts'],
    climb(['services', 'ui', 'cli', 'commands'], 'the broker core never imports services, the UI or the CLI'),
    climb(['endpoints'], "a flow's lifecycle sits below the endpoints: they call it, never the other way"),
  ),
  layer(
    ['src/services/**/*.ts'],
    climb(['ui', 'cli', 'commands'], 'services never import the UI or the CLI: the command hands the UI in'),
  ),
  layer(['src/ui/**/*.{ts,tsx}'], climb(['cli', 'commands'], 'the UI never imports the CLI')),
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
