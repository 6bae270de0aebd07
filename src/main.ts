import './common/node-version.js';
import './runtime-flags.js';
import { existsSync } from 'node:fs';
import nodeModule from 'node:module';

/**
 * The service's entry (`node dist/main.js`). It checks the runtime and may re-execute itself with
 * V8 flags (runtime-flags.ts) before anything else loads: ES modules load and compile their whole
 * static import graph before any of them runs, so were the service imported here statically, the
 * process that is about to re-execute would first compile all of it, for nothing — about two thirds
 * of a CPU-second a start. Then Node's compile cache (its default directory under the system's
 * temporary one; NODE_DISABLE_COMPILE_CACHE=1 turns it off) keeps the compiled code of the service
 * and its packages for the next start, and the service (server.ts, bundled with its packages into
 * one file by the build) loads.
 */
// Node 22.1 and later (this project's @types/node predates it).
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
// The build's single-file bundle of server.js and its imports (scripts/bundle-server.mjs); the
// compiled modules themselves when there is none (a build by tsc alone).
const bundled = new URL('./bundle/server.js', import.meta.url);
await import(existsSync(bundled) ? bundled.href : './server.js');
