import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sendProblem } from '../http/problem.js';
import { isUuid } from '../common/uuid.js';

/** Where `npm run build` puts the page (scripts/build-console.mjs). */
export const CONSOLE_WEB_DIR = fileURLToPath(new URL('../console-web/', import.meta.url));

/** The page's own paths: one HTML document, which routes in the browser. */
const PAGES = ['/console', '/console/', '/console/orders/:id', '/console/inventory'];

/**
 * The operator console: one static page and its assets, served by every api process. Nothing on it
 * is secret (the data comes through the admin API, behind the session), so the page itself needs
 * no session; its script and stylesheet are content-hashed and cached for good.
 */
export async function registerConsolePages(app: FastifyInstance): Promise<void> {
  const indexFile = `${CONSOLE_WEB_DIR}index.html`;
  if (!existsSync(indexFile)) throw new Error(`the operator console is not built (${indexFile} is missing): run npm run build`);
  const html = readFileSync(indexFile);
  const page = async (req: FastifyRequest, reply: FastifyReply) => {
    // A malformed order id names no order: 404, like the API, rather than a page that cannot load.
    const id = (req.params as { id?: string }).id;
    if (id !== undefined && !isUuid(id)) return sendProblem(reply, 'NOT_FOUND', `order ${id} not found`);
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html);
  };
  for (const url of PAGES) app.get(url, page);
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
