import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One log line per request, at its end: the request (method, URL, host, peer), the answer's status and its time, under
 * the request's id (and, once authenticated, its tenant and user). Fastify's default writes a second line as each
 * request arrives; every request here ends with an answer (a command without a decision is answered 503 after
 * `COMMAND_TIMEOUT_MS`), so that line told nothing the last one does not, and was half the log's volume. pino's own
 * HTTP logger (pino-http) logs a request so too.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}
