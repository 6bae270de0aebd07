#!/usr/bin/env node
// `npm test`: every check, in the order that keeps two cores busy (docs/TESTING.md).
//   1. at once: the build, the lint (tsc, eslint, dependency-cruiser) and the unit specs (no dist needed);
//      the build emits without type-checking (tsc --noCheck: the same files out), as the lint's tsc
//      checks every file and a refusal stops the run
//   2. side by side: the medium and e2e specs in parallel workers (TEST_WORKERS, default 4: most
//      e2e time is waiting for timers, gateways and other processes, so more workers than cores
//      pays), and the e2e-in-band specs one after the other (jest.config.js IN_BAND)
// A failed build or lint stops it; failed specs do not (every test step runs, as jest runs every
// file). Its exit status is the first failure's.
import { spawn } from 'node:child_process';

const JEST = ['node_modules/jest/bin/jest.js', '--ci'];
const workers = process.env.TEST_WORKERS ?? '4';

function run(label, command, args, env = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
    child.once('exit', (code, signal) => {
      const status = code ?? (signal ? 1 : 0);
      process.stdout.write(`\n[test] ${label}: ${status === 0 ? 'ok' : `failed (${signal ?? code})`} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
      resolve(status);
    });
  });
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const jestEnv = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim() };
const steps = [
  () => [
    run('build', npm, ['run', 'build', '--silent'], { TSC_BUILD_FLAGS: '--noCheck' }),
    run('lint', npm, ['run', 'lint', '--silent']),
    run('unit', process.execPath, [...JEST, '--selectProjects', 'unit'], jestEnv),
  ],
  () => [
    run(`medium + e2e (${workers} workers)`, process.execPath, [...JEST, '--selectProjects', 'medium', 'e2e', `--maxWorkers=${workers}`], jestEnv),
    run('e2e-in-band', process.execPath, [...JEST, '--selectProjects', 'e2e-in-band', '--runInBand'], jestEnv),
  ],
];

const started = Date.now();
let failed = 0;
for (const [i, step] of steps.entries()) {
  const statuses = await Promise.all(step());
  failed ||= statuses.find((s) => s !== 0) ?? 0;
  if (i === 0 && (statuses[0] !== 0 || statuses[1] !== 0)) break; // no dist, or the lint refused
}
process.stdout.write(`[test] ${failed ? 'FAILED' : 'all passed'} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
process.exit(failed);
