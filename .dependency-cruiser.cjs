/**
 * The layering, checked on every lint run (`npm run lint`), for every folder of src/. A folder
 * imports only folders on its own layer's left in this list — never one to its right — and no
 * file takes part in an import cycle. docs/ARCHITECTURE.md ("Layering") says the same in words.
 *
 *   common, config, logging → metrics → database → http → payments → inventory → orders →
 *   webhooks → jobs → recovery → access → admin, console → ops → app.module.ts → server.ts, openapi.ts → main.ts
 *
 * Folders on one layer do not import each other. gateway-simulator/ is an app of its own: it
 * may use common/ only. Inside orders/ and inventory/ the same holds for their parts (the
 * `inside` rules below). The list itself is layers.cjs, which the SQL functions' call graph is
 * checked against too (src/database/sql-graph.spec.ts).
 */
const { LAYERS } = require('./layers.cjs');

/** A path pattern for a folder (`orders` → src/orders/…) or a top-level file (`main.ts`). */
const place = (name) => (name.endsWith('.ts') ? `^src/${name.replace('.', '\\.')}$` : `^src/${name}/`);
const any = (names) => `(${names.map(place).join('|')})`;

const layerRules = LAYERS.flatMap((layer, i) => {
  const above = LAYERS.slice(i + 1).flat();
  // The top layer's only file (main.ts) may import anything: no rule (an empty list would match every path).
  if (above.length === 0 && layer.length === 1) return [];
  return layer.map((name) => ({
    name: `layer-${name}`,
    comment: `${name} sits on layer ${i + 1} of ${LAYERS.length}: it may not import ${above.length ? above.join(', ') : 'anything of the service'}, nor another folder of its layer (.dependency-cruiser.cjs)`,
    severity: 'error',
    from: { path: place(name) },
    to: { path: any([...above, ...layer.filter((n) => n !== name)]) },
  }));
});

/** A part of a folder that may not import the parts above it (`above`, except `notAbove`). */
const inside = (folder, part, from, above, notAbove) => ({
  name: `inside-${folder}-${part}`,
  comment: `${folder}/: ${part} may not import the parts of ${folder}/ above it (.dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: from },
  to: notAbove ? { path: above, pathNot: notAbove } : { path: above },
});

/** orders/: the files at its top but its bottom ones (the scheduler port and the request schemas). */
const ORDERS_BASE = '^src/orders/(state/|order-scheduler\\.ts$|orders\\.schemas\\.ts$)';
const ORDERS_TOP = '^src/orders/[^/]+\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import cycle: the files in it cannot be read, tested or moved one without the other',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'gateway-simulator-apart',
      comment: 'the gateway simulator is an app of its own: it may use common/ only',
      severity: 'error',
      from: { path: '^src/gateway-simulator/' },
      to: { path: '^src/', pathNot: '^src/(gateway-simulator|common)/' },
    },
    {
      name: 'nothing-imports-the-service',
      comment: 'the service (src/) never imports its tests, migrations, scripts or benchmarks',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|migrations|scripts|bench)/' },
    },
    // orders/: the order state (with the scheduler port and the request schemas) at the bottom,
    // then Cancel (with expiry and refunds), then Confirm (which hands an expired order to the
    // expiry) and Try, on top the module, the controller, the answers and the due-order driver.
    inside('orders', 'state', ORDERS_BASE, `^src/orders/(cancel|confirm|try)/|${ORDERS_TOP}`, ORDERS_BASE),
    inside('orders', 'cancel', '^src/orders/cancel/', `^src/orders/(confirm|try)/|${ORDERS_TOP}`, ORDERS_BASE),
    inside('orders', 'confirm', '^src/orders/confirm/', `^src/orders/try/|${ORDERS_TOP}`, ORDERS_BASE),
    inside('orders', 'try', '^src/orders/try/', `^src/orders/(confirm|cancel)/|${ORDERS_TOP}`, ORDERS_BASE),
    // inventory/: stock (SKU read and upsert) below the participant; the module on top.
    inside('inventory', 'stock', '^src/inventory/(?!participant/|inventory\\.module\\.ts$)', '^src/inventory/(participant/|inventory\\.module\\.ts$)'),
    inside('inventory', 'participant', '^src/inventory/participant/', '^src/inventory/inventory\\.module\\.ts$'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|test|migrations|scripts|bench)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
