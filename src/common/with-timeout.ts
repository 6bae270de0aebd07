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
