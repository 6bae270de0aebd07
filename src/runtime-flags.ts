/**
 * V8 sizes its heap for the machine, not for this service: on a large machine the young
 * generation grows to 64 MB semi-spaces and the old generation is collected late, so a busy
 * process sits at 350-400 MB RSS around a live heap of ~55 MB. The process re-executes itself
 * once, in place (process.execve: same PID, same stdio, signals unchanged), with smaller caps —
 * unless V8 heap flags were given, TCC_V8_FLAGS=off, or the runtime cannot (Node 22 before 22.15).
 * Imported first by main.ts, before anything heavy loads.
 */
const FLAG = '--max-semi-space-size';
const OLD = '--max-old-space-size';
const execve = (process as unknown as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
const given = [FLAG, OLD].some((f) => process.execArgv.some((a) => a.startsWith(f)) || (process.env.NODE_OPTIONS ?? '').includes(f));

if (!given && process.env.TCC_V8_FLAGS !== 'off' && typeof execve === 'function') {
  const flags = [`${FLAG}=${process.env.TCC_SEMI_SPACE_MB ?? '16'}`, `${OLD}=${process.env.TCC_OLD_SPACE_MB ?? '192'}`];
  execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], process.env);
}

export {};
