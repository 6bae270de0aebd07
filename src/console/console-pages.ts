import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isUuid } from '../common/uuid.js';
import { sendProblem } from '../http/problem.js';

/** Where `npm run build` puts the page (scripts/build-console.mjs). */
export const CONSOLE_WEB_DIR = fileURLToPath(new URL('../console-web/', import.meta.url));

/** The page's own paths: one HTML document, which routes in the browser. */
const PAGES = [
  '/console',
  '/console/',
  '/console/orders/:id',
  '/console/inventory',
  '/console/inventory/import',
  '/console/inventory/:sku',
  '/console/locations',
  '/console/webhooks',
  '/console/api-keys',
  '/console/operators',
  '/console/audit',
];

const SKU = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * The operator console: one static page and its assets, served by every api process. Nothing on it
 * is secret (the data comes through the admin API, behind the session), so the page itself needs
 * no session; its script and stylesheet are content-hashed and cached for good.
 */
export async function registerConsolePages(app: FastifyInstance): Promise<ConsoleNotFound> {
  const indexFile = `${CONSOLE_WEB_DIR}index.html`;
  if (!existsSync(indexFile)) throw new Error(`the operator console is not built (${indexFile} is missing): run npm run build`);
  const html = readFileSync(indexFile);
  const send = (req: FastifyRequest, reply: FastifyReply, found: boolean) => {
    // What is not there is 404 NOT_FOUND, like the API; a browser (it asks for HTML) gets it as the
    // console's page, which says so with its navigation, never as raw JSON.
    if (!found && !wantsHtml(req)) return sendProblem(reply, 'NOT_FOUND', 'no such console page');
    return reply
      .code(found ? 200 : 404)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send(html);
  };
  // A malformed order id or SKU names nothing.
  const page = async (req: FastifyRequest, reply: FastifyReply) => {
    const { id, sku } = req.params as { id?: string; sku?: string };
    return send(req, reply, !((id !== undefined && !isUuid(id)) || (sku !== undefined && !SKU.test(sku))));
  };
  for (const url of PAGES) app.get(url, page);
  // Any other path under /console is a page that does not exist.
  app.get('/console/*', async (req, reply) => send(req, reply, false));
  await app.register(fastifyStatic, {
    root: `${CONSOLE_WEB_DIR}assets`,
    prefix: '/console/assets/',
    wildcard: false,
    decorateReply: false,
    index: false,
    maxAge: '365d',
    immutable: true,
  });
  return (req, reply) => void send(req, reply, false);
}

/** Answers 404: the console's page for a browser (it says what was not found), else problem+json. */
export type ConsoleNotFound = (req: FastifyRequest, reply: FastifyReply) => void;

/** A browser navigating asks for HTML; an API client or a script does not. */
function wantsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return typeof accept === 'string' && accept.includes('text/html');
}

/** A path of the console's pages: where a path the router cannot read still gets the page. */
export const isConsolePath = (path: string): boolean => /^\/console(?:\/|$)/.test(path);
