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
