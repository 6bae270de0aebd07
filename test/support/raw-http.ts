import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** Milliseconds from the first byte sent to the whole answer received. */
  ms: number;
  /** The server closed the connection after answering. */
  closed: boolean;
}

/**
 * Sends bytes exactly as given (what fetch refuses to send: a Content-Length the body does not
 * match, a path with raw bytes) and reads one answer. Resolves once the answer's body is complete;
 * `closed` says whether the server then hung up (it waits up to `closeWaitMs` for that).
 */
export function rawRequest(baseUrl: string, request: string | Buffer, opts: { timeoutMs?: number; closeWaitMs?: number } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(Number(port), hostname);
    let buffer = Buffer.alloc(0);
    let answer: Omit<RawAnswer, 'closed'> | undefined;
    let closeTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${opts.timeoutMs ?? 5000} ms; got ${JSON.stringify(buffer.toString('latin1').slice(0, 300))}`));
    }, opts.timeoutMs ?? 5000);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      clearTimeout(closeTimer);
      socket.destroy();
      if (answer) resolve({ ...answer, closed });
      else reject(new Error(`connection closed without a complete answer: ${JSON.stringify(buffer.toString('latin1').slice(0, 300))}`));
    };
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (answer) return;
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < end + 4 + length) return;
      const text = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // not JSON
      }
      answer = { status: Number(statusLine.split(' ')[1]), headers, body, ms: Date.now() - started };
      closeTimer = setTimeout(() => finish(false), opts.closeWaitMs ?? 500);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
    socket.write(request);
  });
}

/** One answer read off a raw connection, and when its last byte arrived (ms after the connection opened). */
export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: any;
  at: number;
  /** Interim answers that came before it (100 Continue). */
  interim: number[];
}

/**
 * A connection to write to as the test pleases (a byte at a time, a second request later) and to
 * read answers from, one after the other. `closed` resolves, with when, once the server hangs up.
 */
export class RawConnection {
  private readonly socket: net.Socket;
  private readonly opened = Date.now();
  private buffer = Buffer.alloc(0);
  /** Bytes taken off `buffer` so far, and when each chunk arrived (by the total received once it had). */
  private consumed = 0;
  private readonly arrivals: { total: number; at: number }[] = [];
  private waiting?: () => void;
  readonly closed: Promise<number>;

  constructor(baseUrl: string) {
    const { hostname, port } = new URL(baseUrl);
    this.socket = net.connect(Number(port), hostname);
    this.socket.on('error', () => undefined);
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.arrivals.push({ total: this.consumed + this.buffer.length, at: Date.now() - this.opened });
      this.waiting?.();
    });
    this.closed = new Promise((resolve) =>
      this.socket.on('close', () => {
        resolve(Date.now() - this.opened);
        this.waiting?.();
      }),
    );
  }

  write(data: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data);
  }

  /** Writes `pieces` one every `everyMs` (the first at once), while the connection lasts. */
  trickle(pieces: (string | Buffer)[], everyMs: number): void {
    pieces.forEach((piece, i) => setTimeout(() => this.write(piece), i * everyMs).unref());
  }

  /** The next whole answer (Content-Length framed), skipping 1xx; rejects on close or after `timeoutMs`. */
  async next(timeoutMs: number): Promise<RawReply> {
    const deadline = Date.now() + timeoutMs;
    const interim: number[] = [];
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
        const status = Number(statusLine.split(' ')[1]);
        const headers: Record<string, string> = {};
        for (const l of lines) {
          const i = l.indexOf(':');
          headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const length = status < 200 ? 0 : Number(headers['content-length'] ?? 0);
        if (this.buffer.length >= end + 4 + length) {
          const text = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
          const complete = this.consumed + end + 4 + length;
          const at = this.arrivals.find((a) => a.total >= complete)!.at;
          this.buffer = this.buffer.subarray(end + 4 + length);
          this.consumed = complete;
          if (status < 200) {
            interim.push(status);
            continue;
          }
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            // not JSON
          }
          return { status, headers, body, at, interim };
        }
      }
      if (this.socket.destroyed || Date.now() >= deadline) {
        throw new Error(`no complete answer ${this.socket.destroyed ? 'before the connection closed' : `within ${timeoutMs} ms`}; got ${JSON.stringify(this.buffer.toString('latin1').slice(0, 300))}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiting = undefined;
    }
  }

  /** Whether the server hung up within `ms` (without the test closing it). */
  async closesWithin(ms: number): Promise<boolean> {
    return Promise.race([this.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
  }

  destroy(): void {
    this.socket.destroy();
  }
}
