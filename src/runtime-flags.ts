/**
 * V8 sizes its heap for the machine, not for this service: on a large machine the young
 * generation grows to 64 MB semi-spaces and the old generation is collected late, so a busy
 * process holds several times its live heap. The process re-executes itself
 * once, in place (process.execve: same PID, same stdio, signals unchanged), with smaller caps —
 * unless V8 heap flags were given, TCC_V8_FLAGS=off, or the runtime cannot (Node 22 before 22.15).
 * Imported first by main.ts, before anything heavy loads.
 *
 * The same re-execution turns off V8's allocation-site pretenuring. Once objects from one
 * allocation site have been seen surviving scavenges, V8 allocates that site's objects straight in
 * the old generation. A request's objects live a few ms here, but a burst or a pause makes some
 * sites look long-lived, and their objects then fill the old generation with garbage that only a
 * mark-compact frees: with pretenuring off there are half as many mark-compacts, and the tail
 * latency falls with them (BENCHMARKS.md, "Lessons").
 */
const FLAG = '--max-semi-space-size';
const OLD = '--max-old-space-size';
const execve = (process as unknown as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
const given = [FLAG, OLD].some((f) => process.execArgv.some((a) => a.startsWith(f)) || (process.env.NODE_OPTIONS ?? '').includes(f));

if (!given && process.env.TCC_V8_FLAGS !== 'off' && typeof execve === 'function') {
  const flags = [`${FLAG}=${process.env.TCC_SEMI_SPACE_MB ?? '16'}`, `${OLD}=${process.env.TCC_OLD_SPACE_MB ?? '192'}`, '--no-allocation-site-pretenuring'];
  execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], process.env);
}

export {};
