// typescript-eslint's type-checked recommended set over everything tsc compiles (src/, test/, tools/,
// bench/ through tsconfig.json; console/src/ through console/tsconfig.json): the checks tsc does not
// make. `any` does not spread unseen (no-unsafe-*: a JSON body, a query row or a matcher is given a
// type where it is read); a promise nobody awaits loses its error (and, in a transaction, its
// ordering); a switch that forgets a new status or outcome must not compile quietly. A finding is
// fixed, or disabled on its own line with `-- <reason>`; reportUnusedDisableDirectives removes a
// disable that no longer applies.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'node_modules/', 'bench/results/', 'bench/reference-bench/', 'eslint.config.mjs'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      // `const { secret: _secret, ...view } = row` is how the code drops a field from a copy: the
      // named sibling of a rest element is there to be left out, not forgotten.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    // SQL lives in repositories (`*.repository.ts`), read models (`*.queries.ts`), migrations and
    // platform/database: everything else calls them. A method named `query` elsewhere is SQL to a reader.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.repository.ts', 'src/**/*.queries.ts', 'src/**/migrations/**', 'src/platform/database/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name=/^(query|createQueryBuilder)$/]",
          message: 'SQL belongs in a *.repository.ts or *.queries.ts (docs/development.md).',
        },
        {
          selector: "CallExpression[callee.name='scrapeQuery']",
          message: 'A scrape-time read is SQL: it belongs in a *.queries.ts.',
        },
      ],
    },
  },
);
