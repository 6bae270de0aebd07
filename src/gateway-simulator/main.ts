import '../common/node-version.js';
import { parseSimulatorEnv, SimulatorConfigError } from './sim-env.js';
import { createSimulatorServer } from './server.js';

function log(fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);
}

let config;
try {
  config = parseSimulatorEnv(process.env);
} catch (err) {
  if (!(err instanceof SimulatorConfigError)) throw err;
  process.stderr.write(`gateway simulator: invalid configuration: ${err.message}\n`);
  process.exit(1);
}

const sim = createSimulatorServer(config.faults);
sim.server.on('error', (err) => {
  process.stderr.write(`gateway simulator: ${err.message}\n`);
  process.exit(1);
});
sim.server.listen(config.port, () => {
  const address = sim.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log({ msg: 'gateway simulator listening', port, faults: sim.faults });
});

let stopping = false;
function shutdown(signal: string): void {
  if (stopping) return;
  stopping = true;
  log({ msg: 'gateway simulator stopping', signal });
  // close() destroys hanging sockets, so this cannot stall on a "hang" fault.
  sim.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
