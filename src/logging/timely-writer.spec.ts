import { jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { Destination, timelyWriter } from './logger.js';

/**
 * A destination that behaves as sonic-boom does with minLength: lines are gathered; past minLength,
 * or on flush(), what is gathered goes out in one write that completes later (`complete()`), and
 * flush() does nothing while such a write is in flight.
 */
class FakeDestination extends EventEmitter implements Destination {
  gathered = 0;
  inFlight = 0;
  out = 0;
  flushes = 0;
  constructor(private readonly minLength: number) {
    super();
  }
  write(bytes: Buffer): void {
    this.gathered += bytes.length;
    if (this.gathered > this.minLength && !this.inFlight) this.start();
  }
  flush(): void {
    this.flushes += 1;
    if (!this.inFlight) this.start();
  }
  complete(): void {
    const n = this.inFlight;
    this.inFlight = 0;
    this.out += n;
    this.emit('write', n);
  }
  private start(): void {
    this.inFlight = this.gathered;
    this.gathered = 0;
  }
}

describe('timelyWriter', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes a line within the flush interval, and sets no timer while there is nothing to write', () => {
    const d = new FakeDestination(8192);
    const write = timelyWriter(d, 100);
    expect(jest.getTimerCount()).toBe(0);
    write('one line\n');
    jest.advanceTimersByTime(100);
    d.complete();
    expect(d.out).toBe(9);
    jest.advanceTimersByTime(100); // the flush that finds everything written
    expect(jest.getTimerCount()).toBe(0);
    const flushes = d.flushes;
    jest.advanceTimersByTime(10_000);
    expect(d.flushes).toBe(flushes);
  });

  it('a line gathered while a write is in flight still goes out without another line to carry it', () => {
    const d = new FakeDestination(10);
    const write = timelyWriter(d, 100);
    write('a line long enough to start a write\n'); // past minLength: a write starts and stays in flight
    write('the last line\n'); // gathered behind it
    jest.advanceTimersByTime(100); // flush() while the write is in flight: nothing happens
    d.complete();
    expect(d.gathered).toBe(14);
    jest.advanceTimersByTime(100); // the timer came back
    d.complete();
    expect(d.out).toBe(36 + 14);
    jest.advanceTimersByTime(100);
    expect(jest.getTimerCount()).toBe(0);
  });
});
