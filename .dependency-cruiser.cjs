/**
 * The direction of imports, checked in `npm run lint`. The patterns name top-level folders only
 * (src/domain/, src/channels/, test/, tools/), so they hold wherever the rest of src/ is regrouped.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-orphans',
      comment:
        'A module nothing imports and that imports nothing is dead code, or an entry point that must be listed here ' +
        'with its reason. Dotfiles, declaration files and tsconfig are not modules of the program.',
      severity: 'error',
      from: {
        orphan: true,
        pathNot: [
          '(^|/)[.][^/]+[.](?:js|cjs|mjs|ts|cts|mts|json)$',
          '[.]d[.]ts$',
          '(^|/)tsconfig[.]json$',
          // Preloaded into the measured process by bench/reconcile.ts (node -r), by path.
          '^bench/print-peak-rss[.]js$',
        ],
      },
      to: {},
    },
    {
      name: 'domain-imports-nothing',
      comment: 'src/domain is the shared vocabulary: it imports no other part of the project.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^(src|test|tools|bench)/', pathNot: '^src/domain/' },
    },
    {
      name: 'domain-without-framework',
      comment: 'src/domain stays plain TypeScript: no Nest, no TypeORM.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: 'node_modules/(@nestjs|@nestjs-cls|typeorm|nestjs-)' },
    },
    {
      name: 'channels-import-only-the-domain',
      comment:
        'A channel adapter depends on the vocabulary and its own files, never on a feature, config or the platform; ' +
        'only on the helper that validates its environment variables with the rest of the configuration.',
      severity: 'error',
      from: { path: '^src/channels/' },
      to: { path: '^(src|test|tools|bench)/', pathNot: '^src/(domain/|channels/|platform/config/env-validation\\.ts$)' },
    },
    {
      name: 'channel-folders-apart',
      comment: 'One channel never imports another: what they share lives beside the port in src/channels/.',
      severity: 'error',
      from: { path: '^src/channels/([^/]+)/' },
      to: { path: '^src/channels/[^/]+/', pathNot: '^src/channels/$1/' },
    },
    {
      name: 'platform-names-no-feature',
      comment:
        'src/platform holds only what every feature shares (database, transaction, HTTP plumbing, metrics, health, ' +
        'lifecycle, logging, configuration plumbing): it imports no feature. What the app is made of is composed ' +
        'at the top (app.module.ts, configuration.ts, main.ts).',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/(platform|domain)/' },
    },
    {
      name: 'no-folder-cycles',
      comment:
        'Folders depend one way: the platform names no feature, and features do not go round in circles. ' +
        'What the app is made of is listed where it is composed (app.module.ts, main.ts).',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'product-without-test-tooling',
      comment: 'Nothing in src/ (its specs included) imports test/, tools/ or bench/: they are not shipped.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|tools|bench)/' },
    },
    {
      name: 'not-to-dev-dep',
      comment:
        'Production code imports only production dependencies: `npm prune --omit=dev` (the Dockerfile, ' +
        'tools/build-production.sh) removes the others, and the service would die at start with ' +
        '"Cannot find module". Specs beside the code may use development dependencies.',
      severity: 'error',
      from: { path: '^src/', pathNot: '\\.spec\\.ts$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-non-package-json',
      comment: 'Every package src/ imports is declared in package.json, not merely installed as some other package\'s dependency.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
