import { LogController } from 'fastify';
import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout; every role names itself so merged logs stay readable. */
export function createLogger(level: string, role: string): Logger {
  return pino({ level, base: { role }, timestamp: pino.stdTimeFunctions.isoTime });
}

/**
 * Fastify options shared by every HTTP server: our logger, and no per-request lines from Fastify
 * (the gateway writes one structured line per request itself).
 */
export function fastifyLogging(logger: Logger) {
  return { loggerInstance: logger, logController: new LogController({ disableRequestLogging: true }) };
}
