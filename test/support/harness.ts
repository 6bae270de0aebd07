import { createTestDatabase, TestDatabase } from './database.js';
import { client, Client } from './http.js';
import { deleteQueueKeys, queuePrefix, ServiceProcess, startService } from './service.js';
import { SimulatorHandle, startSimulator } from './simulator.js';

export interface Harness {
  db: TestDatabase;
  sim: SimulatorHandle;
  svc: ServiceProcess;
  api: Client;
  prefix: string;
  /** Stops the service and starts it again (same database and queues), with extra env. */
  restart(env?: Record<string, string>): Promise<void>;
}

/**
 * One test file's world: a database cloned from the migrated template, an in-process gateway
 * simulator, and the built service as a real process pointed at both. Registers its own
 * beforeAll/afterAll; the fields are set once beforeAll has run.
 */
export function useHarness(env: Record<string, string> = {}): Harness {
  const h = { prefix: queuePrefix() } as Harness;
  const start = async (extra: Record<string, string> = {}) => {
    h.svc = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ...env, ...extra });
    h.api = client(h.svc.url);
  };
  h.restart = async (extra) => {
    await h.svc?.stop();
    await start(extra);
  };
  beforeAll(async () => {
    h.db = await createTestDatabase();
    h.sim = await startSimulator();
    await start();
  });
  afterAll(async () => {
    await h.svc?.stop();
    await h.sim?.close();
    await h.db?.drop();
    await deleteQueueKeys(h.prefix);
  });
  return h;
}
