import { writeFileSync } from 'node:fs';
import { command, Engine, freePorts, info, startEngine, tempDir, waitFor } from './engine.js';

export interface RedisSentinelGroup {
  /** As REDIS_SENTINELS takes them: `127.0.0.1:port,…`. */
  sentinels: string;
  /** As REDIS_SENTINEL_MASTER takes it. */
  masterName: string;
  /** The master's URL as a plain client would name it in REDIS_URL (the first master, which a failover leaves behind). */
  firstUrl: string;
  /** The master's port as the Sentinels name it now. */
  masterPort(): Promise<number>;
  /**
   * SIGKILLs the current master (a machine lost) and waits until every Sentinel names a replica
   * as the new master and that replica says it is one. Returns it and the time it took.
   */
  killMaster(): Promise<{ promoted: number; failoverMs: number }>;
  /**
   * A failover the operator asks for (`SENTINEL FAILOVER`): the master is demoted to a replica of
   * the one promoted, alive, its clients told to go. Returns the new master and the time it took.
   */
  failover(): Promise<{ promoted: number; failoverMs: number }>;
  /** Stops every engine still running (by pid) and removes the directory. */
  stop(): Promise<void>;
}

export interface RedisSentinelOptions {
  replicas?: number;
  sentinels?: number;
  masterName?: string;
  /** down-after-milliseconds: how long a silent master takes to be judged down. */
  downAfterMs?: number;
}

/**
 * A Sentinel group of its own, from Debian's redis-server: one master, `replicas` replicas and
 * `sentinels` Sentinels (quorum: a majority of them), on free ports, in a temporary directory.
 * Nothing persists to disk but the Sentinels' own configuration files, which they rewrite.
 */
export async function startRedisSentinel(opts: RedisSentinelOptions = {}): Promise<RedisSentinelGroup> {
  const replicas = opts.replicas ?? 2;
  const sentinelCount = opts.sentinels ?? 3;
  const masterName = opts.masterName ?? 'tcc-master';
  const ports = await freePorts(1 + replicas + sentinelCount);
  const [masterPort, ...rest] = ports;
  const replicaPorts = rest.slice(0, replicas);
  const sentinelPorts = rest.slice(replicas);
  const dir = tempDir('redis-sentinel');
  const engines: Engine[] = [];
  const stop = async () => {
    await Promise.all(engines.map((e) => e.stop()));
    dir.remove();
  };
  const data = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'no', '--dir', dir.path, '--save', '', '--appendonly', 'no', '--logfile', `${dir.path}/redis-${port}.log`];
  try {
    engines.push(startEngine(masterPort, data(masterPort)));
    for (const port of replicaPorts) engines.push(startEngine(port, [...data(port), '--replicaof', '127.0.0.1', String(masterPort)]));
    const quorum = Math.floor(sentinelCount / 2) + 1;
    for (const port of sentinelPorts) {
      const file = `${dir.path}/sentinel-${port}.conf`;
      writeFileSync(
        file,
        [
          `port ${port}`, 'bind 127.0.0.1', 'protected-mode no', `dir ${dir.path}`, `logfile ${dir.path}/sentinel-${port}.log`,
          `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} ${quorum}`,
          `sentinel down-after-milliseconds ${masterName} ${opts.downAfterMs ?? 2000}`,
          `sentinel failover-timeout ${masterName} 10000`,
          `sentinel parallel-syncs ${masterName} 1`,
        ].join('\n') + '\n',
      );
      engines.push(startEngine(port, [file, '--sentinel']));
    }
    await waitFor('replicas in sync, every Sentinel seeing them and its peers', 30_000, async () => {
      for (const port of replicaPorts) if ((await info(port, 'replication')).master_link_status !== 'up') return undefined;
      for (const port of sentinelPorts) {
        const [seenReplicas, peers] = await Promise.all([command(port, 'SENTINEL', 'REPLICAS', masterName), command(port, 'SENTINEL', 'SENTINELS', masterName)]);
        if ((seenReplicas as unknown[]).length !== replicas || (peers as unknown[]).length !== sentinelCount - 1) return undefined;
      }
      return true;
    });
  } catch (err) {
    await stop();
    throw err;
  }

  const alive = () => engines.filter((e) => !e.gone());
  const named = async (port: number) => Number(((await command(port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)) as string[])[1]);
  const current = async () => named(sentinelPorts[0]);
  /** Waits until every live Sentinel names the same master other than `old`, and it says it is one. */
  const promotedInsteadOf = (old: number) =>
    waitFor(`a replica of ${old} promoted`, 30_000, async () => {
      const names = await Promise.all(sentinelPorts.filter((p) => alive().some((e) => e.port === p)).map(named));
      const next = names[0];
      if (next === old || names.some((n) => n !== next)) return undefined;
      return (await info(next, 'replication')).role === 'master' ? next : undefined;
    });
  return {
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    masterName,
    firstUrl: `redis://127.0.0.1:${masterPort}`,
    masterPort: current,
    async killMaster() {
      const old = await current();
      const started = Date.now();
      await engines.find((e) => e.port === old)!.kill();
      return { promoted: await promotedInsteadOf(old), failoverMs: Date.now() - started };
    },
    async failover() {
      const old = await current();
      const started = Date.now();
      await command(sentinelPorts[0], 'SENTINEL', 'FAILOVER', masterName);
      const promoted = await promotedInsteadOf(old);
      await waitFor(`${old} a replica of ${promoted}`, 30_000, async () => ((await info(old, 'replication')).master_port === String(promoted) ? true : undefined));
      return { promoted, failoverMs: Date.now() - started };
    },
    stop,
  };
}
