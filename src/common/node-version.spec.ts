import { checkNodeVersion, MINIMUM_NODE } from './node-version.js';

describe('checkNodeVersion', () => {
  it.each(['22.12.0', '22.20.1', '23.0.0', '24.21.0', '25.1.0', 'v24.0.0'])('%s runs the service', (version) => {
    expect(checkNodeVersion(version)).toBeUndefined();
  });

  it.each(['20.20.2', '22.11.0', '22.0.0', '21.7.3', '18.20.8', 'v20.20.2'])('%s is refused, naming itself and what is needed', (version) => {
    expect(checkNodeVersion(version)).toBe(`tcc-inventory needs Node.js 22.12 or later (24 LTS recommended); this is v${version.replace(/^v/, '')}`);
  });

  it('needs what package.json engines says', async () => {
    const { readFileSync } = await import('node:fs');
    expect(JSON.parse(readFileSync('package.json', 'utf8')).engines.node).toBe(`>=${MINIMUM_NODE}`);
  });

  it('passes the Node running this test (the check at import time let it load)', () => {
    expect(checkNodeVersion(process.versions.node)).toBeUndefined();
  });
});
