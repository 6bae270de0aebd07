import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** The layering (which folder may import which) is checked by dependency-cruiser: .dependency-cruiser.cjs. */
export default tseslint.config(
  { ignores: ['dist/', 'dist-bench/', 'node_modules/', 'coverage/'] },
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
    // CommonJS config (dependency-cruiser reads CommonJS): layers.cjs is loaded with require().
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The operator console's page runs in the browser.
    files: ['src/console/web/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
