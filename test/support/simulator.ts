import type { AddressInfo } from 'node:net';
import type { Faults, SimMode } from '../../src/gateway-simulator/faults.js';
import type { LedgerSnapshot } from '../../src/gateway-simulator/ledger.js';
import { createSimulatorServer } from '../../src/gateway-simulator/server.js';

export type { Faults, SimMode, LedgerSnapshot };

export interface ChargeSummary {
  succeeded: number;
  declined: number;
  /** Sum over succeeded payments of what was captured (amountMinor, or capturedMinor of an authorization) - refundedMinor. */
  netCapturedMinor: number;
}

/** What the gateway holds of an order's authorizations: the money invariant's terms (API.md, "Payment held at Try"). */
export interface HoldSummary {
  /** Authorizations made (capture: false), declined ones aside. */
  authorizations: number;
  /** Authorizations still open: money held. */
  open: number;
  /** Captured payments (charges or captured authorizations). */
  captures: number;
  /** What was captured less what was refunded. */
  netCapturedMinor: number;
}

export interface SimulatorHandle {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:54321 */
  url: string;
  setFaults(faults: Partial<Faults>): Promise<void>;
  /** Replaces a script: new payments' (the default), captures' or voids'. */
  script(modes: SimMode[], kind?: 'script' | 'captureScript' | 'voidScript'): Promise<void>;
  reset(): Promise<void>;
  ledger(): Promise<LedgerSnapshot>;
  chargesFor(reference: string): Promise<ChargeSummary>;
  holdsFor(reference: string): Promise<HoldSummary>;
  close(): Promise<void>;
}

/** Starts an in-process simulator on an ephemeral port; control goes over HTTP like an external one. */
export async function startSimulator(faults: Partial<Faults> = {}): Promise<SimulatorHandle> {
  const sim = createSimulatorServer(faults);
  await new Promise<void>((resolve, reject) => {
    sim.server.once('error', reject);
    sim.server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = sim.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`simulator ${method} ${path} -> ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  }

  const ledger = (): Promise<LedgerSnapshot> => call<LedgerSnapshot>('GET', '/__control/ledger');

  return {
    url,
    setFaults: async (f) => void (await call('PUT', '/__control/faults', f)),
    script: async (modes, kind = 'script') => void (await call('POST', '/__control/script', { [kind]: modes })),
    reset: async () => void (await call('POST', '/__control/reset')),
    ledger,
    async chargesFor(reference) {
      const payments = (await ledger()).payments.filter((p) => p.reference === reference);
      const succeeded = payments.filter((p) => p.status === 'succeeded');
      return {
        succeeded: succeeded.length,
        declined: payments.length - succeeded.length,
        netCapturedMinor: succeeded.reduce((sum, p) => sum + (p.capturedMinor ?? p.amountMinor) - p.refundedMinor, 0),
      };
    },
    async holdsFor(reference) {
      const payments = (await ledger()).payments.filter((p) => p.reference === reference);
      const succeeded = payments.filter((p) => p.status === 'succeeded');
      return {
        authorizations: payments.filter((p) => p.authorizationExpiresAt !== undefined && p.status !== 'declined').length,
        open: payments.filter((p) => p.status === 'authorized').length,
        captures: succeeded.length,
        netCapturedMinor: succeeded.reduce((sum, p) => sum + (p.capturedMinor ?? p.amountMinor) - p.refundedMinor, 0),
      };
    },
    close: () => sim.close(),
  };
}
