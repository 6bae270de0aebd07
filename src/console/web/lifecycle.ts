/**
 * What a view leaves running (auto-refresh timers) ends when the page shows another view: main.ts
 * calls leaveView() before each render, and a view registers its clean-up with onLeave().
 */
const cleanups: (() => void)[] = [];

export function onLeave(cleanup: () => void): void {
  cleanups.push(cleanup);
}

export function leaveView(): void {
  for (const cleanup of cleanups.splice(0)) cleanup();
}

/** The order list's URL as the operator last saw it, so "← Orders" returns to that list. */
let lastList = '/console';

export function rememberList(url: string): void {
  lastList = url;
}

export function listUrl(): string {
  return lastList;
}
