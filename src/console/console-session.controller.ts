import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { ApiCookieAuth, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuditLog } from '../access/audit.js';
import { Operators, type SignInAccount } from '../access/operators.js';
import { AppError } from '../common/errors.js';
import type { Principal } from '../http/actor.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { clientAddress } from '../http/client-address.js';
import { csrfMatches, forbidden } from '../http/auth.js';
import { CredentialThrottle } from '../http/credential-throttle.js';
import { fromAnotherSite } from '../http/request-site.js';
import { cameOverHttps, clearedSessionCookie, SESSION_COOKIE, sessionCookie, sessionCookieGiven, sessionIdOf } from '../http/session-cookie.js';
import { NoBody } from '../http/schemas.js';
import { validateBody } from '../http/validation.js';
import { ACCOUNT_THROTTLE, ConsoleSession, ConsoleSessions } from './console-sessions.js';
import { ConsoleSessionView, SignInBody } from './console.schemas.js';

const SESSION = ref('ConsoleSession', ConsoleSessionView);

/**
 * The operator console's sign-in: an operator's email and password, or the admin token, typed once,
 * are exchanged for an HttpOnly session cookie (and an anti-CSRF token the page keeps in memory).
 * The page itself never stores them. Sign-ins (failed ones with the email tried) and sign-outs go
 * into the audit log.
 */
@ApiTags('console')
@Controller('console/session')
export class ConsoleSessionController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly throttle: CredentialThrottle,
    @Inject(ACCOUNT_THROTTLE) private readonly accounts: CredentialThrottle,
    private readonly operators: Operators,
    private readonly audit: AuditLog,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'signIn', summary: `Sign in with an operator's email and password, or with the admin token: sets the ${SESSION_COOKIE} session cookie` })
  @ApiJsonBody(SignInBody)
  @ApiJson(200, SESSION)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED')
  async signIn(@Body() raw: unknown, @Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply): Promise<ConsoleSession> {
    res.header('cache-control', 'no-store');
    // A sign-in posted from another site's page would sign this browser in as whoever that site
    // chose (login CSRF): refused unjudged, and recorded as a failed sign-in.
    if (fromAnotherSite(req.headers)) {
      void this.record(req, null, 'sign_in', triedTarget(raw), 403);
      throw new AppError('FORBIDDEN', "a sign-in must come from the console's own page, not another site's");
    }
    // After too many wrong credentials from this address, even the right one waits: the answer
    // must not tell a guesser that a guess was right. Checked before the body, as the contract
    // ranks 429. Then the attempt is counted before it is judged (a password's scrypt, the token's
    // tag: slow and costly), and taken back once it is judged right — so of a burst sent at once no
    // more than the limit are judged, the rest refused 429 unjudged (credential-throttle.ts).
    const address = clientAddress(req.raw);
    const waitS = await this.throttle.blocked(address);
    if (waitS !== undefined) {
      // A failed sign-in, recorded like the others: with the email tried (the body is not judged yet).
      throw this.refused(req, res, triedTarget(raw), waitS, 'this address');
    }
    const body = validateBody(SignInBody, raw) as SignInBody;
    const withToken = body.token !== undefined;
    if (withToken === (body.email !== undefined || body.password !== undefined) || (!withToken && (body.email === undefined || body.password === undefined))) {
      throw AppError.validation([{ field: 'body', message: 'sign in with either token (and name) or email and password' }]);
    }
    if (!withToken && body.name !== undefined) throw AppError.validation([{ field: 'name', message: 'name goes with the admin token only' }]);
    const target = withToken ? 'admin token' : body.email!.toLowerCase();
    const wait = await this.throttle.failed(address);
    if (wait !== undefined) {
      throw this.refused(req, res, target, wait, 'this address');
    }
    // Counted as wrong unless judged otherwise: a right one, or one refused unjudged (its account's
    // throttle) or not judged at all (the database away), is taken back.
    let wrong = false;
    try {
      const session = withToken ? await this.sessions.signIn(body.token!, body.name?.trim() || null) : await this.signInOperator(body.email!, body.password!, req, res);
      if (!session) {
        wrong = true;
        void this.record(req, null, 'sign_in', target, 401);
        throw new AppError('UNAUTHORIZED', withToken ? 'that is not the admin token' : 'wrong email or password');
      }
      void this.record(req, session.principal, 'sign_in', target, 200);
      res.header('set-cookie', sessionCookie(session.sessionId, this.sessions.ttlSeconds, cameOverHttps(req)));
      return publicView(session);
    } finally {
      if (!wrong) await this.throttle.forgive(address);
    }
  }

  /**
   * An operator's sign-in: besides the address's throttle, ACCOUNT_FAILURES wrong passwords for one
   * account within ACCOUNT_WINDOW_MS refuse that account's sign-in for the rest of the window —
   * counted the same way, before the password is judged, and taken back when it was right.
   * Undefined: a wrong password, within the account's limit.
   */
  private async signInOperator(email: string, password: string, req: FastifyRequest, res: FastifyReply): Promise<(ConsoleSession & { sessionId: string }) | undefined> {
    const found = await this.operators.account(email);
    const account = accountKey(found, email);
    const waitS = await this.accounts.blocked(account);
    if (waitS !== undefined) {
      throw this.refused(req, res, email.toLowerCase(), waitS, 'this account');
    }
    const wait = await this.accounts.failed(account);
    if (wait !== undefined) {
      throw this.refused(req, res, email.toLowerCase(), wait, 'this account');
    }
    let right = true;
    try {
      const who = await this.operators.signIn(found, password);
      if (who) {
        const session = await this.sessions.signInOperator(who);
        if (session) return session;
        // The operator changed while the password was checked (console-sessions.ts): the sign-in is
        // judged once more against the operator as it is now: after a role change it signs in with
        // the new role; after a new password or a disabling it is a wrong one.
        const now = await this.operators.signIn(await this.operators.account(email), password);
        const again = now && (await this.sessions.signInOperator(now));
        if (again) return again;
      }
      right = false;
      return undefined;
    } finally {
      if (right) await this.accounts.forgive(account);
    }
  }

  /** A sign-in refused 429 by a throttle: audited as a failed one, with who it tried to be. */
  private refused(req: FastifyRequest, res: FastifyReply, target: string, waitS: number, who: string): AppError {
    void this.record(req, null, 'sign_in', target, 429);
    return tooMany(res, waitS, who);
  }

  private record(req: FastifyRequest, principal: Principal | null, action: string, target: string, outcome: number): Promise<void> {
    return this.audit.record({ principal, action, target, outcome, requestId: req.id, address: clientAddress(req.raw) });
  }

  @Get()
  @ApiCookieAuth('consoleSession')
  @ApiOperation({ operationId: 'getConsoleSession', summary: 'The live session of this browser (its anti-CSRF token and expiry)' })
  @ApiJson(200, SESSION)
  @ApiErrors('UNAUTHORIZED')
  async current(@Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply): Promise<ConsoleSession> {
    res.header('cache-control', 'no-store');
    return publicView((await this.live(req, res)).session);
  }

  @Delete()
  @HttpCode(204)
  @ApiCookieAuth('consoleSession')
  @ApiOperation({ operationId: 'signOut', summary: 'Sign out: the session ends on every process and its cookie is refused from now on' })
  @ApiHeader({ name: 'X-CSRF-Token', required: true, description: "The session's csrfToken" })
  @ApiJsonBody(NoBody, false)
  @ApiResponse({ status: 204, description: 'Signed out' })
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED')
  async signOut(@Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply): Promise<void> {
    res.header('cache-control', 'no-store');
    const { id, session } = await this.live(req, res);
    if (!csrfMatches(req.headers['x-csrf-token'], session.csrfToken)) throw forbidden();
    // Checked here, not by a pipe: this route authorizes in its handler, and 401/403 come before 400.
    validateBody(NoBody, req.body);
    await this.sessions.end(id);
    void this.record(req, session.principal, 'sign_out', session.principal.id ?? 'admin token', 204);
    res.header('set-cookie', clearedSessionCookie(cameOverHttps(req)));
  }

  /**
   * This browser's live session, else UNAUTHORIZED (and the dead cookie is dropped). A cookie that
   * is no live session is a wrong credential: counted, and refused 429 once its address is throttled.
   */
  private async live(req: FastifyRequest, res: FastifyReply): Promise<{ id: string; session: ConsoleSession }> {
    const given = sessionCookieGiven(req.headers.cookie);
    if (!given) throw new AppError('UNAUTHORIZED', 'no live console session: sign in');
    const address = clientAddress(req.raw);
    const waitS = await this.throttle.blocked(address);
    if (waitS !== undefined) throw tooMany(res, waitS, 'this address');
    const id = sessionIdOf(req.headers.cookie);
    const session = id ? await this.sessions.find(id) : undefined;
    if (id && session) return { id, session };
    const wait = await this.throttle.failed(address);
    if (wait !== undefined) throw tooMany(res, wait, 'this address');
    res.header('set-cookie', clearedSessionCookie(cameOverHttps(req)));
    throw new AppError('UNAUTHORIZED', 'no live console session: sign in');
  }
}

/** What the page learns of its session (never its id: that stays in the HttpOnly cookie). */
function publicView(s: ConsoleSession): ConsoleSession {
  return { csrfToken: s.csrfToken, expiresAt: s.expiresAt, operator: s.operator, role: s.role, scopes: s.scopes, principal: s.principal };
}

/**
 * The account's throttle key, hashed (no address in a Redis key): the operator the email names,
 * however it is spelled (the lookup's folding decides, not JavaScript's), else the email itself.
 */
function accountKey(found: SignInAccount | undefined, email: string): string {
  return createHash('sha256').update(found ? `operator:${found.id}` : `email:${email.toLowerCase()}`).digest('hex');
}

function tooMany(res: FastifyReply, waitS: number, who: string): AppError {
  res.header('retry-after', String(waitS));
  return new AppError('RATE_LIMITED', `too many wrong credentials from ${who}; try again in ${waitS} s`);
}

/** Who a sign-in refused before its body is judged tried to be: the email as given (a string of sane length), else the token's way in. */
function triedTarget(raw: unknown): string {
  const b = typeof raw === 'object' && raw !== null ? (raw as { email?: unknown; token?: unknown }) : {};
  if (typeof b.email === 'string' && b.email.length <= 254) return b.email.toLowerCase();
  return b.token !== undefined ? 'admin token' : 'unknown';
}
