import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiCookieAuth, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../common/errors.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { csrfMatches, forbidden } from '../http/auth.js';
import { cameOverHttps, clearedSessionCookie, SESSION_COOKIE, sessionCookie, sessionIdOf } from '../http/session-cookie.js';
import { NoBody } from '../http/schemas.js';
import { validateBody } from '../http/validation.js';
import { ConsoleSession, ConsoleSessions } from './console-sessions.js';
import { ConsoleSessionView, SignInBody } from './console.schemas.js';
import { SignInThrottle } from './sign-in-throttle.js';

const SESSION = ref('ConsoleSession', ConsoleSessionView);

/**
 * The operator console's sign-in: the admin token, typed once, is exchanged for an HttpOnly session
 * cookie (and an anti-CSRF token the page keeps in memory). The page itself never stores the token.
 */
@ApiTags('console')
@Controller('console/session')
export class ConsoleSessionController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly throttle: SignInThrottle,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'signIn', summary: `Sign in with the admin token: sets the ${SESSION_COOKIE} session cookie` })
  @ApiJsonBody(SignInBody)
  @ApiJson(200, SESSION)
  @ApiErrors('UNAUTHORIZED', 'RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED')
  async signIn(@Body() raw: unknown, @Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply): Promise<ConsoleSession> {
    res.header('cache-control', 'no-store');
    // After too many wrong tokens from this address, even the right one waits: the answer must not
    // tell a guesser that a guess was right. Checked before the body, as the contract ranks 429; the
    // attempt is taken before the token is judged and kept only when the token was wrong.
    const address = req.socket.remoteAddress ?? 'unknown';
    const waitS = await this.throttle.attempt(address);
    if (waitS !== undefined) {
      res.header('retry-after', String(waitS));
      throw new AppError('RATE_LIMITED', `too many wrong admin tokens from this address; try again in ${waitS} s`);
    }
    let session: Awaited<ReturnType<ConsoleSessions['signIn']>>;
    try {
      const body = validateBody(SignInBody, raw) as SignInBody;
      session = await this.sessions.signIn(body.token, body.name?.trim() || null);
    } catch (err) {
      await this.throttle.giveBack(address);
      throw err;
    }
    if (!session) throw new AppError('UNAUTHORIZED', 'that is not the admin token');
    await this.throttle.giveBack(address);
    res.header('set-cookie', sessionCookie(session.sessionId, this.sessions.ttlSeconds, cameOverHttps(req)));
    return { csrfToken: session.csrfToken, expiresAt: session.expiresAt, operator: session.operator };
  }

  @Get()
  @ApiCookieAuth('consoleSession')
  @ApiOperation({ operationId: 'getConsoleSession', summary: 'The live session of this browser (its anti-CSRF token and expiry)' })
  @ApiJson(200, SESSION)
  @ApiErrors('UNAUTHORIZED')
  async current(@Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply): Promise<ConsoleSession> {
    res.header('cache-control', 'no-store');
    return (await this.live(req, res)).session;
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
    res.header('set-cookie', clearedSessionCookie(cameOverHttps(req)));
  }

  /** This browser's live session, else UNAUTHORIZED (and the dead cookie is dropped). */
  private async live(req: FastifyRequest, res: FastifyReply): Promise<{ id: string; session: ConsoleSession }> {
    const id = sessionIdOf(req.headers.cookie);
    const session = id ? await this.sessions.find(id) : undefined;
    if (id && session) return { id, session };
    if (req.headers.cookie?.includes(`${SESSION_COOKIE}=`)) res.header('set-cookie', clearedSessionCookie(cameOverHttps(req)));
    throw new AppError('UNAUTHORIZED', 'no live console session: sign in');
  }
}
