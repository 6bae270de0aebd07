import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** Import patterns for the modules a layer must not reach, written as the relative paths code uses. */
const modules = (...names) => names.flatMap((n) => [`../${n}`, `../${n}/*`, `../../${n}`, `../../${n}/*`]);

/**
 * Layering, checked on every lint run (STYLE.md): the domain modules (orders, inventory, payments)
 * never import the operational shell around them (ops, admin, console, webhooks, recovery, jobs);
 * the participant and the gateway client know nothing of the coordinator; common/ is the bottom
 * layer and imports no other module (database/ imports common/, never the other way round).
 */
const layer = (files, forbidden, why) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: modules(...forbidden), message: why }] }] },
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    // The operator console's page runs in the browser.
    files: ['src/console/web/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  layer(
    ['src/orders/**/*.ts'],
    ['ops', 'admin', 'console', 'webhooks', 'recovery', 'jobs'],
    'orders/ is the coordinator: it must not import the operational modules around it (ops, admin, console, webhooks, recovery, jobs).',
  ),
  layer(
    ['src/inventory/**/*.ts', 'src/payments/**/*.ts'],
    ['orders', 'ops', 'admin', 'console', 'webhooks', 'recovery', 'jobs'],
    'the participant and the gateway client must not know about the coordinator or the operational modules.',
  ),
  layer(
    ['src/common/**/*.ts'],
    ['database', 'config', 'http', 'logging', 'metrics', 'orders', 'inventory', 'payments', 'ops', 'admin', 'console', 'webhooks', 'recovery', 'jobs'],
    'common/ is the bottom layer: it imports no other module of the service.',
  ),
);
