/**
 * The layering of src/, lowest first: a folder (or top-level file) uses only what sits on a layer
 * to its left, never one to its right nor another of its own layer. Read by dependency-cruiser
 * (.dependency-cruiser.cjs: the TypeScript imports) and by src/database/sql-graph.spec.ts (the
 * calls between the engine's SQL functions), so both check one list.
 */
const LAYERS = [
  ['common', 'config', 'logging', 'runtime-flags.ts'],
  ['metrics'],
  ['database'],
  ['http'],
  ['payments'],
  ['inventory'],
  ['orders'],
  ['webhooks'],
  ['jobs'],
  ['recovery'],
  ['access'],
  ['admin', 'console'],
  ['ops'],
  ['app.module.ts'],
  ['server.ts', 'openapi.ts'],
  ['main.ts'],
];

module.exports = { LAYERS };
