/** Resolves when `work` settles or after `ms`, whichever is first; never rejects. */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([work.then(() => 'done' as const, () => 'done' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What readyWithin waits on: a connection with a status and a 'ready' event (an ioredis client). */
export interface Readiable {
  status: string;
  once(event: 'ready', listener: () => void): unknown;
  off(event: 'ready', listener: () => void): unknown;
}

/** Resolves once `client` is ready (now, or at its next 'ready') or after `ms`; never rejects, and leaves no listener behind. */
export async function readyWithin(client: Readiable, ms: number): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    client.once('ready', done);
  });
}
