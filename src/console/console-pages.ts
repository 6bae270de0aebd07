import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isUuid } from '../common/uuid.js';

/** Where `npm run build` puts the page (scripts/build-console.mjs). */
export const CONSOLE_WEB_DIR = fileURLToPath(new URL('../console-web/', import.meta.url));

/** The page's own paths: one HTML document, which routes in the browser. */
const PAGES = [
  '/console',
  '/console/',
  '/console/orders/:id',
  '/console/inventory',
  '/console/inventory/:sku',
  '/console/locations',
  '/console/webhooks',
];

const SKU = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * The operator console: one static page and its assets, served by every api process. Nothing on it
 * is secret (the data comes through the admin API, behind the session), so the page itself needs
 * no session; its script and stylesheet are content-hashed and cached for good.
 */
export async function registerConsolePages(app: FastifyInstance): Promise<void> {
  const indexFile = `${CONSOLE_WEB_DIR}index.html`;
  if (!existsSync(indexFile)) throw new Error(`the operator console is not built (${indexFile} is missing): run npm run build`);
  const html = readFileSync(indexFile);
  const send = (reply: FastifyReply, status: number) => reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html);
  // A malformed order id or SKU names nothing: 404, like the API — but still the console's page,
  // which says so with its navigation (a browser shows no raw JSON).
  const page = async (req: FastifyRequest, reply: FastifyReply) => {
    const { id, sku } = req.params as { id?: string; sku?: string };
    return send(reply, (id !== undefined && !isUuid(id)) || (sku !== undefined && !SKU.test(sku)) ? 404 : 200);
  };
  for (const url of PAGES) app.get(url, page);
  // Any other path under /console is a page that does not exist: the page says so.
  app.get('/console/*', async (_req, reply) => send(reply, 404));
  await app.register(fastifyStatic, {
    root: `${CONSOLE_WEB_DIR}assets`,
    prefix: '/console/assets/',
    wildcard: false,
    decorateReply: false,
    index: false,
    maxAge: '365d',
    immutable: true,
  });
}
