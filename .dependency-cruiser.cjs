/** Import cycles fail `npm run check`; type-only imports count, since they tie the modules' designs together. */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Move what both modules need to a small module of its own, named for what it holds.',
      from: {},
      to: { circular: true },
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
