#!/usr/bin/env node
// Part of `npm run build`: copies every src/**/*.sql (the engine's SQL functions, each beside the
// code that calls it) to the same path under dist/, where the migration runner applies them
// (src/database/sql-functions.ts).
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');

for (const file of readdirSync(SRC, { recursive: true })) {
  if (!file.endsWith('.sql')) continue;
  mkdirSync(dirname(join(DIST, file)), { recursive: true });
  copyFileSync(join(SRC, file), join(DIST, file));
}
