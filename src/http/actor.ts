import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * Who makes a change through the admin API, as the ledger and the timeline record it: `admin` (the
 * bearer token) or `console` (a console session, with the name its operator gave at sign-in, if
 * any). Set by the authorization check (auth.ts) on the requests it lets through.
 */
export interface Actor {
  kind: 'admin' | 'console';
  operator: string | null;
}

const ACTOR = Symbol('actor');

type WithActor = { [ACTOR]?: Actor };

export function setActor(req: FastifyRequest, actor: Actor): void {
  (req as unknown as WithActor)[ACTOR] = actor;
}

/** The request's actor; a request that reached a protected handler always has one. */
export function actorOf(req: FastifyRequest): Actor {
  return (req as unknown as WithActor)[ACTOR] ?? { kind: 'admin', operator: null };
}

/** `@ActorParam() actor: Actor` in an admin handler. */
export const ActorParam = createParamDecorator((_data: unknown, ctx: ExecutionContext): Actor => actorOf(ctx.switchToHttp().getRequest<FastifyRequest>()));
