import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout; every role names itself so merged logs stay readable. */
export function createLogger(level: string, role: string): Logger {
  return pino({ level, base: { role }, timestamp: pino.stdTimeFunctions.isoTime });
}
