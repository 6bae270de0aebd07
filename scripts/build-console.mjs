#!/usr/bin/env node
// Part of `npm run build`: type-checks the operator console's browser code (src/console/web), then
// bundles it with esbuild into dist/console-web: index.html plus content-hashed assets/app-*.js and
// assets/styles-*.css, which src/console/console-pages.ts serves. Nothing is fetched at run time.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src/console/web');
const OUT = join(ROOT, 'dist/console-web');

const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(SRC, 'tsconfig.json')], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

mkdirSync(join(OUT, 'assets'), { recursive: true });
const result = await build({
  entryPoints: { app: join(SRC, 'main.ts'), styles: join(SRC, 'styles.css') },
  outdir: join(OUT, 'assets'),
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const asset = (prefix, ext) => {
  const name = outputs.find((o) => o.startsWith(`${prefix}-`) && o.endsWith(ext));
  if (!name) throw new Error(`build-console: esbuild wrote no ${prefix}*${ext}`);
  return `/console/assets/${name}`;
};
const html = readFileSync(join(SRC, 'index.html'), 'utf8').replace('{{script}}', asset('app', '.js')).replace('{{style}}', asset('styles', '.css'));
writeFileSync(join(OUT, 'index.html'), html);
