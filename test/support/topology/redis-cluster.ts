import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { command, Engine, freePorts, info, startEngine, tempDir, waitFor } from './engine.js';

const run = promisify(execFile);

export interface ClusterNode {
  port: number;
  role: 'master' | 'replica';
  /** A master's slot ranges, [from, to] inclusive. */
  slots: [number, number][];
  /** A replica's master, by port. */
  masterPort?: number;
}

export interface RedisCluster {
  /** Seed nodes as REDIS_CLUSTER_NODES takes them: `127.0.0.1:port,…` (every node). */
  seeds: string;
  /** The node a plain client would name in REDIS_URL (the first master). */
  firstUrl: string;
  /** The cluster as its live nodes see it now. */
  nodes(): Promise<ClusterNode[]>;
  /** The master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /**
   * SIGKILLs the master at `port` (a machine lost) and waits until one of its replicas serves its
   * slots and the cluster says `ok` again. Returns the replica promoted and the time it took.
   */
  killMaster(port: number): Promise<{ promoted: number; failoverMs: number }>;
  /** SIGKILLs the node at `port`, whatever its role, and returns at once. */
  killNode(port: number): Promise<void>;
  /** Starts the node at `port` again, with its cluster configuration, and waits for `cluster_state:ok` on every live node. */
  restartNode(port: number): Promise<void>;
  /** The `cluster_state` a live node reports. */
  state(port: number): Promise<string>;
  /** Stops every node still running (by pid) and removes the directory. */
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a silent master takes to be judged failed. */
  nodeTimeoutMs?: number;
}

function parseNodes(text: string): (ClusterNode & { id: string; masterId?: string; failed: boolean; port: number })[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, addr, flags, masterId, , , , , ...slotSpecs] = line.split(' ');
      const port = Number(addr.split('@')[0].split(':').pop());
      const slots = slotSpecs.filter((s) => !s.startsWith('[')).map((s) => s.split('-').map(Number)).map(([a, b]) => [a, b ?? a] as [number, number]);
      const role = flags.includes('master') ? ('master' as const) : ('replica' as const);
      return { id, port, role, slots, masterId: masterId === '-' ? undefined : masterId, failed: /fail|noaddr/.test(flags) };
    });
}

/**
 * A Redis Cluster of its own, from Debian's redis-server: `masters` masters with
 * `replicasPerMaster` replicas each, on free ports (cluster bus ports too), in a temporary
 * directory, made a cluster by `redis-cli --cluster create`. Nothing persists to disk.
 */
export async function startRedisCluster(opts: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = opts.masters ?? 3;
  const count = masters * (1 + (opts.replicasPerMaster ?? 1));
  const ports = await freePorts(count * 2);
  const dir = tempDir('redis-cluster');
  const engines: Engine[] = [];
  const stop = async () => {
    await Promise.all(engines.map((e) => e.stop()));
    dir.remove();
  };
  const launch = (i: number) =>
    startEngine(ports[i], [
      '--port', String(ports[i]), '--cluster-port', String(ports[count + i]), '--bind', '127.0.0.1', '--protected-mode', 'no',
      '--cluster-enabled', 'yes', '--cluster-config-file', `${dir.path}/nodes-${ports[i]}.conf`,
      '--cluster-node-timeout', String(opts.nodeTimeoutMs ?? 2000),
      '--dir', dir.path, '--save', '', '--appendonly', 'no', '--logfile', `${dir.path}/redis-${ports[i]}.log`,
    ]);
  try {
    for (let i = 0; i < count; i++) engines.push(launch(i));
    const live = engines.slice(0, count);
    for (const e of live) await waitFor(`redis node ${e.port} answering`, 10_000, async () => ((await command(e.port, 'PING')) === 'PONG' ? true : undefined));
    await run('redis-cli', ['--cluster', 'create', ...live.map((e) => `127.0.0.1:${e.port}`), '--cluster-replicas', String(opts.replicasPerMaster ?? 1), '--cluster-yes'], { timeout: 30_000 });
    await waitFor('the cluster ok on every node, every replica in sync', 30_000, async () => {
      for (const e of live) {
        const state = await info(e.port, 'replication');
        if (state.role === 'slave' && state.master_link_status !== 'up') return undefined;
        if (!String(await command(e.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return undefined;
      }
      const nodes = parseNodes(String(await command(live[0].port, 'CLUSTER', 'NODES')));
      return nodes.length === count && nodes.filter((n) => n.role === 'master' && n.slots.length).length === masters ? true : undefined;
    });
  } catch (err) {
    await stop();
    throw err;
  }

  const alive = () => engines.filter((e) => !e.gone());
  const state = async (port: number) => /cluster_state:(\w+)/.exec(String(await command(port, 'CLUSTER', 'INFO')))?.[1] ?? 'unknown';
  const nodes = async (): Promise<ClusterNode[]> => {
    const parsed = parseNodes(String(await command(alive()[0].port, 'CLUSTER', 'NODES'))).filter((n) => !n.failed);
    const portOf = new Map(parsed.map((n) => [n.id, n.port]));
    return parsed.map(({ port, role, slots, masterId }) => ({ port, role, slots, masterPort: masterId ? portOf.get(masterId) : undefined }));
  };
  return {
    seeds: engines.map((e) => `127.0.0.1:${e.port}`).join(','),
    firstUrl: `redis://127.0.0.1:${engines[0].port}`,
    nodes,
    async masterOf(key) {
      const slot = Number(await command(alive()[0].port, 'CLUSTER', 'KEYSLOT', key));
      const master = (await nodes()).find((n) => n.role === 'master' && n.slots.some(([a, b]) => slot >= a && slot <= b));
      if (!master) throw new Error(`no master serves slot ${slot}`);
      return master.port;
    },
    async killMaster(port) {
      const before = await nodes();
      const victim = before.find((n) => n.port === port && n.role === 'master');
      if (!victim) throw new Error(`${port} is not a master`);
      const replicas = before.filter((n) => n.masterPort === port).map((n) => n.port);
      const started = Date.now();
      await engines.find((e) => e.port === port)!.kill();
      const promoted = await waitFor(`a replica of ${port} promoted`, 30_000, async () => {
        for (const r of replicas) {
          if ((await info(r, 'replication')).role !== 'master') continue;
          const ok = await Promise.all(alive().map(async (e) => String(await command(e.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')));
          if (ok.every(Boolean)) return r;
        }
        return undefined;
      });
      return { promoted, failoverMs: Date.now() - started };
    },
    async killNode(port) {
      await engines.find((e) => e.port === port && !e.gone())!.kill();
    },
    async restartNode(port) {
      const i = ports.indexOf(port);
      engines[i] = launch(i);
      await waitFor(`the cluster ok again with ${port}`, 30_000, async () => {
        const states = await Promise.all(alive().map((e) => state(e.port)));
        return states.every((st) => st === 'ok') ? true : undefined;
      });
    },
    state,
    stop,
  };
}
