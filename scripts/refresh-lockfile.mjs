#!/usr/bin/env node
// `npm run lockfile:refresh`: brings package-lock.json up to date with package.json so that
// `npm ci` accepts it on every platform.
//
// Why: the registry mirror this project is built against serves only the Linux builds of some
// optional native packages (@msgpackr-extract/* from bullmq's msgpackr, @unrs/resolver-binding-*
// from jest). `npm install` then writes a lock without the other platforms' entries, and `npm ci`
// refuses it ("Missing: @msgpackr-extract/msgpackr-extract-darwin-arm64@ from lock file").
//
// How: 1. `npm install --package-lock-only --ignore-scripts` (locked versions are kept; only what
//         package.json changed is resolved; node_modules is not touched, no script runs);
//      2. every optional dependency that a locked package names but the lock does not hold gets a
//         stub entry { version, cpu, libc, os, optional }, so `npm ci` finds it and skips it by
//         platform without fetching it. os/cpu/libc come from the package name (`-darwin-arm64`,
//         `-linux-x64-gnu`, `-win32-x64-msvc`, …), or from the registry when the name says nothing.
// To re-resolve every dependency from scratch, delete package-lock.json first.
//
// Plain Node (>= 20), no dependencies.
import { spawnSync } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LOCK = join(ROOT, 'package-lock.json');

const OSES = new Set(['aix', 'android', 'cygwin', 'darwin', 'freebsd', 'linux', 'netbsd', 'openbsd', 'openharmony', 'sunos', 'win32']);
const CPUS = new Set(['arm', 'arm64', 'ia32', 'loong64', 'mips', 'mipsel', 'mips64el', 'ppc', 'ppc64', 's390', 's390x', 'riscv64', 'wasm32', 'x64']);
const CPU_ALIASES = { aarch64: 'arm64', x86_64: 'x64' };
// ABI suffixes that name a C library; the others (msvc, eabi, wasi) do not.
const LIBCS = { gnu: 'glibc', glibc: 'glibc', gnueabihf: 'glibc', musl: 'musl', musleabihf: 'musl' };
const EXACT_VERSION = /^[=v]?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$/;

function fail(message) {
  console.error(`refresh-lockfile: ${message}`);
  process.exit(1);
}

/** Runs npm with the same npm that runs this script when started by `npm run`. */
function npm(args, { capture = false } = {}) {
  const execPath = process.env.npm_execpath;
  const viaNpm = execPath && /npm-cli\.c?js$/.test(basename(execPath));
  const [cmd, pre] = viaNpm ? [process.execPath, [execPath]] : [process.platform === 'win32' ? 'npm.cmd' : 'npm', []];
  return spawnSync(cmd, [...pre, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    shell: process.platform === 'win32',
  });
}

/** The registry's answer for `npm view <spec> <fields…> --json`, or undefined when it has none. */
function npmView(spec, fields) {
  const res = npm(['view', spec, ...fields, '--json'], { capture: true });
  if (res.status !== 0 || !res.stdout.trim()) return undefined;
  try {
    return JSON.parse(res.stdout);
  } catch {
    return undefined;
  }
}

/** os/cpu/libc read off a platform package's name, e.g. `resolver-binding-linux-x64-musl`. */
function platformFromName(name) {
  const fields = {};
  for (const raw of basename(name).split('-')) {
    const token = raw.toLowerCase();
    if (OSES.has(token)) fields.os ??= [token];
    else if (CPUS.has(token) || token in CPU_ALIASES) fields.cpu ??= [CPU_ALIASES[token] ?? token];
    else if (token in LIBCS) fields.libc ??= [LIBCS[token]];
  }
  if (!fields.os && !fields.cpu) return undefined;
  if (fields.os?.[0] !== 'linux') delete fields.libc;
  return fields;
}

function platformFromRegistry(name, version) {
  const meta = npmView(`${name}@${version}`, ['os', 'cpu', 'libc']);
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) return undefined;
  const fields = {};
  for (const key of ['os', 'cpu', 'libc']) {
    if (meta[key] !== undefined) fields[key] = [meta[key]].flat();
  }
  return fields.os || fields.cpu ? fields : undefined;
}

/** Where Node would find `name` from the package at lock path `from` (its node_modules, then each ancestor's). */
function resolveFrom(packages, from, name) {
  let dir = from;
  for (;;) {
    const candidate = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (dir === '') return undefined;
    const up = dir.lastIndexOf('/node_modules/');
    dir = up === -1 ? '' : dir.slice(0, up);
  }
}

/** An entry this script (or a hand) wrote: optional, never fetched, so no integrity. */
const isStub = (entry) => entry.optional === true && !entry.integrity && !entry.resolved && !entry.link;

function stubVersion(packages, parent, name, spec) {
  const exact = EXACT_VERSION.exec(spec.trim());
  if (exact) return exact[1];
  // Platform builds are published in lockstep: a sibling with the same spec that the registry
  // did serve tells the version.
  for (const [sibling, siblingSpec] of Object.entries(parent.entry.optionalDependencies)) {
    if (sibling === name || siblingSpec !== spec) continue;
    const at = resolveFrom(packages, parent.path, sibling);
    if (at && !isStub(packages[at])) return packages[at].version;
  }
  const versions = npmView(`${name}@${spec}`, ['version']);
  const list = [versions].flat().filter((v) => typeof v === 'string');
  return list.at(-1);
}

function platformOf(name, version) {
  return platformFromName(name) ?? platformFromRegistry(name, version);
}

function stubEntry(version, platform, dev) {
  // Key order as npm writes it, so a later `npm install` leaves the entry alone.
  const entry = { version };
  if (platform.cpu) entry.cpu = platform.cpu;
  if (dev) entry.dev = true;
  if (platform.libc) entry.libc = platform.libc;
  entry.optional = true;
  if (platform.os) entry.os = platform.os;
  return entry;
}

function sameJson(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Adds the missing optional platform packages; returns what it added or rewrote. */
function addStubs(lock) {
  const packages = lock.packages;
  if (!packages || typeof packages !== 'object') fail('package-lock.json has no "packages" (lockfileVersion 2 or 3 expected)');
  const changes = [];
  const problems = [];
  const parents = Object.entries(packages)
    .filter(([, entry]) => entry.optionalDependencies && !entry.link)
    .map(([path, entry]) => ({ path, entry }));
  for (const parent of parents) {
    for (const [name, spec] of Object.entries(parent.entry.optionalDependencies)) {
      const found = resolveFrom(packages, parent.path, name);
      if (found && !isStub(packages[found])) continue; // npm resolved it: not ours to touch
      const version = found ? packages[found].version : stubVersion(packages, parent, name, spec);
      if (!version) {
        problems.push(`${name}@${spec} (optional dependency of ${parent.path || 'the root'}): no exact version in the spec and none from the registry`);
        continue;
      }
      const platform = platformOf(name, version);
      if (!platform) {
        problems.push(`${name}@${version}: os/cpu cannot be read off its name and the registry does not have it`);
        continue;
      }
      const exact = EXACT_VERSION.exec(spec.trim())?.[1];
      let at = found;
      if (!at || (exact && packages[at].version !== exact)) {
        const top = `node_modules/${name}`;
        at = packages[top] ? `${parent.path ? `${parent.path}/` : ''}node_modules/${name}` : top;
      }
      const wanted = stubEntry(exact ?? version, platform, parent.entry.dev === true);
      if (packages[at] && sameJson(packages[at], wanted)) continue;
      changes.push(`${packages[at] ? 'rewrote' : 'added'} ${at}@${wanted.version} ${JSON.stringify({ os: wanted.os, cpu: wanted.cpu, libc: wanted.libc })}`);
      packages[at] = wanted;
    }
  }
  if (problems.length > 0) fail(`cannot write stub entries for:\n  ${problems.join('\n  ')}`);
  // npm keeps "packages" sorted this way; sorting keeps the diff to the new entries.
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => a.localeCompare(b, 'en')));
  return changes;
}

function main() {
  console.log('refresh-lockfile: npm install --package-lock-only --ignore-scripts');
  const install = npm(['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund']);
  if (install.error) fail(`cannot run npm: ${install.error.message}`);
  if (install.status !== 0) fail(`npm install exited with ${install.status}; package-lock.json is as npm left it`);

  const text = readFileSync(LOCK, 'utf8');
  const lock = JSON.parse(text);
  const changes = addStubs(lock);
  if (changes.length === 0) {
    console.log('refresh-lockfile: every optional platform package is in the lock; nothing to add');
    return;
  }
  // Keep npm's formatting (indent, line ends) and replace the file in one step.
  const indent = /^\{\r?\n([ \t]+)"/.exec(text)?.[1] ?? '  ';
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const tmp = `${LOCK}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(lock, null, indent)}\n`.replace(/\n/g, eol));
  renameSync(tmp, LOCK);
  console.log(`refresh-lockfile: ${changes.length} stub entr${changes.length === 1 ? 'y' : 'ies'}:\n  ${changes.join('\n  ')}`);
}

main();
