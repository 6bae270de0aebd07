import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import { AppError, ERROR_CODES, ErrorCode, Problem, toProblem } from '../common/errors.js';
import type { JobScheduler } from '../jobs/job-scheduler.js';

/** A 4xx/5xx of the dashboard in the contract's words: 404 NOT_FOUND, other 4xx VALIDATION_FAILED, 5xx SERVICE_UNAVAILABLE. */
function boardProblem(status: number, detail: string, field = 'request'): Problem {
  if (status >= 500) return toProblem('SERVICE_UNAVAILABLE', 'the queue dashboard cannot reach Redis');
  if (status === 404) return toProblem('NOT_FOUND', detail);
  return toProblem('VALIDATION_FAILED', detail, { errors: [{ field, message: detail }] });
}

function isProblem(body: unknown): boolean {
  const b = body as { type?: unknown; code?: unknown } | null;
  return typeof b?.type === 'string' && ERROR_CODES.includes(b?.code as ErrorCode);
}

/** What bull-board said, as a detail and a field: `{ error: "text" }` or `{ error: { key, options: { field } } }`. */
function describeBoardAnswer(payload: unknown): { detail: string; field?: string } {
  let body: unknown = payload;
  if (typeof payload === 'string') {
    try {
      body = JSON.parse(payload);
    } catch {
      return { detail: 'the queue dashboard refused the request' };
    }
  }
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return { detail: error.slice(0, 200) };
  const keyed = error as { key?: unknown; options?: { field?: unknown } } | undefined;
  const field = typeof keyed?.options?.field === 'string' ? keyed.options.field : undefined;
  return { detail: typeof keyed?.key === 'string' ? `${keyed.key}${field ? ` (${field})` : ''}` : 'the queue dashboard refused the request', field };
}

/**
 * bull-board at /admin/queues, behind the admin check like every /admin route (main.ts), read-only:
 * every write endpoint of its API is refused 400 VALIDATION_FAILED before bull-board sees it. Every
 * refusal it makes is problem+json with a contract code: its own answers (an invalid query, an
 * unknown queue) are rewritten on the way out, and when Redis is away its API answers 503.
 */
export async function registerQueueBoard(app: FastifyInstance, jobs: JobScheduler, basePath = '/admin/queues'): Promise<void> {
  const adapter = new FastifyAdapter();
  adapter.setBasePath(basePath);
  // Read-only: the dashboard shows queues and jobs but offers no action. Its page sends state changes
  // without the console's anti-CSRF token, so an action it offered would fail for every console
  // session; jobs are driven by the service (and the sweeper), not by hand.
  // A link back to the operator console in its header (the dashboard is opened from there).
  createBullBoard({
    queues: Object.values(jobs.queues).map((q) => new BullMQAdapter(q, { readOnlyMode: true })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'TCC queues', hideDocsLink: true, miscLinks: [{ text: '← Operator console', url: '/console' }] } },
  });
  adapter.setErrorHandler((err: Error & { statusCode?: number }) => {
    // A body refused by the service's own parser (input rules, size), then anything else.
    const problem =
      err instanceof AppError
        ? toProblem(err.code, err.message, err.extra, err.status)
        : err.statusCode === 413
          ? toProblem('PAYLOAD_TOO_LARGE', 'the body is over 64 KiB')
          : boardProblem(err.statusCode && err.statusCode < 500 ? err.statusCode : 503, err.message);
    return { status: problem.status as 400, body: problem };
  });
  await app.register(
    async (scope) => {
      // Read-only means every write endpoint refuses, not only those bull-board checks: its
      // pause-all and resume-all skip read-only queues and answer 200 {} having done nothing. So
      // no method but a read reaches bull-board at all: after the admin check and the body's own
      // refusals (a body that is not JSON is MALFORMED_JSON, which the contract ranks first).
      scope.addHook('preHandler', async (req, reply) => {
        if (req.method === 'GET' || req.method === 'HEAD') return;
        const problem = boardProblem(405, 'the queue dashboard is read-only: it takes no action');
        reply.code(problem.status).type('application/problem+json').send(problem);
        return reply;
      });
      scope.addHook('onSend', async (_req, reply, payload) => {
        if (reply.statusCode < 400) return payload;
        reply.type('application/problem+json');
        if (typeof payload === 'string' && isProblem(safeParse(payload))) return payload;
        const { detail, field } = describeBoardAnswer(payload);
        const problem = boardProblem(reply.statusCode, detail, field);
        reply.code(problem.status);
        return JSON.stringify(problem);
      });
      await scope.register(adapter.registerPlugin());
    },
    { prefix: basePath },
  );
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
