import { LogController } from 'fastify';
import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout; every role names itself so merged logs stay readable. */
export function createLogger(level: string, role: string): Logger {
  return pino({ level, base: { role }, timestamp: pino.stdTimeFunctions.isoTime, serializers: { err: safeError } });
}

/**
 * Errors as logged. A failed query's error carries its SQL and parameters (drizzle puts both in the
 * message, postgres.js in properties), and parameters can be secrets such as a webhook signing key,
 * so query errors are reduced to their type, SQLSTATE and the database's own message.
 */
export function safeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const cause = (err as { cause?: unknown }).cause;
  const queryFailed = /^Failed query/.test(err.message) || 'parameters' in err || 'params' in err;
  if (!queryFailed) return pino.stdSerializers.err(err);
  const source = cause instanceof Error ? cause : err;
  const code = (source as { code?: unknown }).code;
  return {
    type: err.name,
    // drizzle's own message is the SQL and parameters; the driver's message is the database's.
    message: source === err && /^Failed query/.test(err.message) ? 'database query failed' : `database query failed: ${source.message}`,
    sqlState: typeof code === 'string' ? code : undefined,
    // The message, which can span lines, heads the stack: keep only the frames.
    stack: (err.stack ?? '')
      .split('\n')
      .filter((line) => /^\s+at /.test(line))
      .join('\n'),
  };
}

/**
 * Fastify options shared by every HTTP server: our logger, and no per-request lines from Fastify
 * (the gateway writes one structured line per request itself).
 */
export function fastifyLogging(logger: Logger) {
  return { loggerInstance: logger, logController: new LogController({ disableRequestLogging: true }) };
}
