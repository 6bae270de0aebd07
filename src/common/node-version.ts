/**
 * The first import of every entry point (the service, the migration runner, the TypeORM CLI's data
 * source, the gateway simulator, the test setup): on an older Node the dependencies fail while they
 * load (undici 8 binds zlib's zstd functions, which Node 20 lacks) with a TypeError that names no
 * cause. ES modules evaluate every static import before their own body, so this check has to be
 * imported first, and imports nothing itself.
 */

/** The oldest Node the service runs on (package.json `engines`). */
export const MINIMUM_NODE = '22.12';

/** Why this service cannot run on Node `version` (`process.versions.node`, "20.20.2"), or undefined when it can. */
export function checkNodeVersion(version: string): string | undefined {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  const [needMajor, needMinor] = MINIMUM_NODE.split('.').map(Number);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return `tcc-inventory needs Node.js ${MINIMUM_NODE} or later (24 LTS recommended); this is v${version.replace(/^v/, '')}`;
}

const refusal = checkNodeVersion(process.versions.node);
if (refusal !== undefined) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
