/**
 * Import cycles fail `npm run check`; type-only imports count, since they tie the modules' designs
 * together. So does a command that would load the servers' dependencies where it needs none of them,
 * and an import that runs across the layers: app to app, package to app.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Move what both modules need to a small module of its own, named for what it holds.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'light-commands-load-no-sdk',
      severity: 'error',
      comment:
        'Every command reads configuration, and `send` and `admin` are run by hand, often: import the ' +
        'light subpaths (@tributary/acp/defaults, @tributary/platforms/defaults or /gateway-sender), not ' +
        'a package root, which loads the ACP SDK, the platform clients or the tokenizer.',
      from: { path: '^(packages/config/src/|apps/cli/src/(send|admin)-command\\.ts$)' },
      to: { path: '^packages/(acp|platforms|packing)/src/index\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-app-imports-another-app',
      severity: 'error',
      comment:
        'An app is a process of its own; what two apps share belongs in a package. Only the CLI, which ' +
        'starts them all, imports apps.',
      from: { path: '^apps/([^/]+)/src/', pathNot: '^apps/cli/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'no-package-imports-an-app',
      severity: 'error',
      comment: 'Packages sit under the apps: an app passes a package what it needs from another app.',
      from: { path: '^packages/[^/]+/src/' },
      to: { path: '^apps/' },
    },
    {
      name: 'key-layout-for-tests-only',
      severity: 'error',
      comment: "Redis keys are read and written through the queue's stores and scripts (docs/adr/0011).",
      from: { path: '^(apps|packages)/[^/]+/src/' },
      to: { path: '^packages/queue/src/testing\\.ts$' },
    },
    {
      name: 'queue-layers-point-down',
      severity: 'error',
      comment:
        'Inside the queue package the scripts (lua/) know no store, and the stores know no caller of the state machine (threads/): each layer imports only the ones below it (docs/adr/0050).',
      from: { path: '^packages/queue/src/(lua|stores)/' },
      to: { path: '^packages/queue/src/(threads|stores)/', pathNot: '^packages/queue/src/$1/' },
    },
    {
      name: 'cli-loads-only-its-command',
      severity: 'error',
      comment: 'The CLI imports a command module when that command runs, so each loads only what it uses.',
      from: { path: '^apps/cli/src/main\\.ts$' },
      to: { path: '-command\\.ts$', dependencyTypesNot: ['dynamic-import'] },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Workspace packages resolve through their `exports` to their sources, so cycles across packages show.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'default'] },
    doNotFollow: { path: 'node_modules' },
  },
};
