import { EventEmitter } from 'node:events';
import { readyWithin } from './with-timeout.js';

/** A connection as readyWithin sees it: a status and a 'ready' event. */
function connection(status: string) {
  return Object.assign(new EventEmitter(), { status });
}

describe('readyWithin', () => {
  it('returns at once when the connection is ready', async () => {
    const c = connection('ready');
    await readyWithin(c, 10_000);
    expect(c.listenerCount('ready')).toBe(0);
  });

  it('resolves at the ready event, before its time is out', async () => {
    const c = connection('connecting');
    const started = Date.now();
    setTimeout(() => c.emit('ready'), 20);
    await readyWithin(c, 10_000);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(c.listenerCount('ready')).toBe(0);
  });

  it('gives up after its time and leaves no listener behind (a health probe each second while Redis is away)', async () => {
    const c = connection('reconnecting');
    for (let i = 0; i < 20; i++) await readyWithin(c, 1);
    expect(c.listenerCount('ready')).toBe(0);
  });
});
