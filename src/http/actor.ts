import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * Who calls (API.md, "Who did it"): the root token (ADMIN_TOKEN), an API key, an operator (a person
 * signed in at the console), or the service itself. `id` and `name` are null for root and system;
 * an API key's or operator's own id and name otherwise, as they are when the request is judged.
 */
export interface Principal {
  type: 'root' | 'api_key' | 'operator' | 'system';
  id: string | null;
  name: string | null;
}

export const ROOT: Principal = { type: 'root', id: null, name: null };
export const SYSTEM: Principal = { type: 'system', id: null, name: null };

/**
 * Who makes a change through the admin API, as the ledger and the timeline record it: `admin` (a
 * bearer credential: the root token or an API key) or `console` (a console session), `operator` the
 * name the ledger shows (the signed-in operator's, or the "Your name" given with the root token at
 * the console), and the principal. Set by the authorization check (auth.ts) on the requests it lets through.
 */
export interface Actor {
  kind: 'admin' | 'console';
  operator: string | null;
  principal: Principal;
}

const ACTOR = Symbol('actor');

type WithActor = { [ACTOR]?: Actor };

export function setActor(req: FastifyRequest, actor: Actor): void {
  (req as unknown as WithActor)[ACTOR] = actor;
}

/** The request's actor, if the authorization check judged it (the audit hook asks every request). */
export function judgedActorOf(req: FastifyRequest): Actor | undefined {
  return (req as unknown as WithActor)[ACTOR];
}

/** The request's actor; a request that reached a protected handler always has one. */
export function actorOf(req: FastifyRequest): Actor {
  return judgedActorOf(req) ?? { kind: 'admin', operator: null, principal: ROOT };
}

/** `@ActorParam() actor: Actor` in an admin handler. */
export const ActorParam = createParamDecorator((_data: unknown, ctx: ExecutionContext): Actor => actorOf(ctx.switchToHttp().getRequest<FastifyRequest>()));

/**
 * What a ledger writer passes as its movement's actor: the actor and the principal as JSON, which
 * the database splits into the actor and principal columns (inventory/ledger/movement-principal.sql).
 */
export function ledgerActor(actor: Actor): string {
  return JSON.stringify({ actor: actor.kind, type: actor.principal.type, id: actor.principal.id, name: actor.principal.name });
}

/** The principal as a timeline event's data records it. */
export function principalNote(actor: Actor): { principal: Principal } {
  return { principal: actor.principal };
}
