#!/usr/bin/env node
// Part of `npm run build`: bundles the compiled service (dist/server.js and everything it imports,
// packages included) into one ES module, dist/bundle/server.js, which dist/main.js loads. A start
// otherwise resolves, reads and links some 2,600 module files (most of them two packages' many
// small files), a third of its CPU; the bundle is one file, compiled once into Node's compile cache.
//
// It sits one folder below dist/ like every compiled module, so the paths the service finds beside
// itself (`..` → dist/: the SQL functions, the migrations, the console's files) are the same from
// the bundle. Left outside, loaded from node_modules as before: the migrations' TypeORM (run in a
// child process), a native addon and optional packages that are not installed. The compiled modules
// stay in dist/ too: the migration runner, the gateway simulator and the OpenAPI writer use them.
import { build } from 'esbuild';
import { isBuiltin } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Node's own modules, where bundled code imports them (`import http from 'node:http'`), are loaded
 * with require() instead. An ES import of a built-in module makes Node build its ES facade, which
 * reads every export once — getters included, and `http`'s WebSocket, CloseEvent and MessageEvent
 * getters load Node's internal undici for it: about 30 ms of CPU a start (0.70 against 0.67 CPU-s
 * to "listening", 24 starts each, alternating) for a client the service never uses (it talks HTTP
 * through the undici package). require() leaves the getters unread. The bindings are the same
 * objects either way; only dynamic import() is left as it is.
 */
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^[a-z:_/0-9]+$/ }, (args) => {
      if (args.kind !== 'import-statement' || !isBuiltin(args.path)) return undefined;
      return { path: args.path, namespace: 'builtin-by-require' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin-by-require' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

await build({
  absWorkingDir: ROOT,
  entryPoints: ['dist/server.js'],
  outfile: 'dist/bundle/server.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  // Class names stay: Nest names providers, log contexts and errors by them.
  keepNames: true,
  logLevel: 'warning',
  plugins: [builtinsByRequire],
  external: [
    'typeorm',
    'msgpackr-extract',
    // Optional, and not installed: their callers load them only when asked for.
    ...['@fastify/multipart', '@fastify/view', '@nestjs/microservices', '@nestjs/platform-express', '@nestjs/websockets', 'class-transformer', 'class-validator', 'pg-native', 'pino-pretty'],
  ],
  // Bundled CommonJS packages call require() for Node's own modules and for packages left outside,
  // and a few name __dirname (ioredis trims error stacks with it).
  banner: {
    js: [
      "import { createRequire as __bundleRequire } from 'node:module';",
      "import { dirname as __bundleDirname } from 'node:path';",
      "import { fileURLToPath as __bundleFileURLToPath } from 'node:url';",
      'const require = __bundleRequire(import.meta.url);',
      'const __filename = __bundleFileURLToPath(import.meta.url);',
      'const __dirname = __bundleDirname(__filename);',
    ].join(' '),
  },
});
