type Headers = Record<string, string | string[] | undefined>;

/**
 * A request a browser sent from another site's page: a form there can post a JSON body as
 * text/plain. The browser says so in `Sec-Fetch-Site`, which a page cannot set; a browser that
 * sends no Fetch Metadata is judged by its `Origin` against the host the request was sent to
 * (`Host`, or `X-Forwarded-Host` from a proxy: headers a form cannot add either). A client that is
 * not a browser sends neither and is not from another site.
 */
export function fromAnotherSite(headers: Headers): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined) return site === 'cross-site' || site === 'same-site';
  const origin = headers.origin;
  if (typeof origin !== 'string') return false;
  let from: string;
  try {
    const url = new URL(origin);
    from = hostOf(url.host, url.protocol);
  } catch {
    return true; // "null" (a sandboxed or data: page) or no origin at all
  }
  return !sentTo(headers).some((host) => hostOf(host, undefined) === from);
}

/** The hosts the request was sent to: its Host, and the first X-Forwarded-Host. */
function sentTo(headers: Headers): string[] {
  const hosts: string[] = [];
  for (const name of ['host', 'x-forwarded-host']) {
    const v = headers[name];
    const first = (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim();
    if (first) hosts.push(first);
  }
  return hosts;
}

/** A host in one spelling: lower case, without the default port of its scheme (or of either, when not known). */
function hostOf(host: string, protocol: string | undefined): string {
  const h = host.toLowerCase();
  if ((protocol === undefined || protocol === 'http:') && h.endsWith(':80')) return h.slice(0, -3);
  if ((protocol === undefined || protocol === 'https:') && h.endsWith(':443')) return h.slice(0, -4);
  return h;
}
