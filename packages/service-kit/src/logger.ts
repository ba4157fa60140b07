/**
 * Structured logs with pino. `LOG_FMT=JSON` (default) writes pino's JSON lines; `GCL` writes the
 * Google Cloud Logging shape (`severity`, `message`, `timestamp`) so the platform parses levels.
 * A line written inside a traced request or event carries its trace and span ids
 * (log-trace-fields.ts).
 */
import { pino, type Logger } from 'pino';
import type { LogFormat } from './log-format.ts';
import { traceLogFields } from './log-trace-fields.ts';
import { redactQuery, redactUrl } from './secret-parameters.ts';

export type { Logger } from 'pino';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

const gclSeverity: Record<string, string> = {
  trace: 'DEBUG',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARNING',
  error: 'ERROR',
  fatal: 'CRITICAL',
};

export interface LoggerOptions {
  name: string;
  format?: LogFormat;
  level?: LogLevel;
  /** GOOGLE_CLOUD_PROJECT: the project of `logging.googleapis.com/trace` in GCL lines. */
  projectId?: string | undefined;
  destination?: pino.DestinationStream;
}

/** Fields of a log line that may hold a URL or a query: their secret parameters are redacted. */
const urlFields = ['url', 'path', 'target', 'request_path', 'href'];
const queryFields = ['query', 'query_string', 'queryString'];

/** The line's fields with LOG_REDACT_PARAMS values replaced (secret-parameters.ts). */
export function redactLogFields(fields: Record<string, unknown>): Record<string, unknown> {
  let out = fields;
  for (const [names, redact] of [
    [urlFields, redactUrl],
    [queryFields, redactQuery],
  ] as const)
    for (const name of names) {
      const value = out[name];
      if (typeof value !== 'string') continue;
      const clean = redact(value);
      if (clean !== value) out = { ...out, [name]: clean };
    }
  return out;
}

export function createLogger(opts: LoggerOptions): Logger {
  const base: pino.LoggerOptions = {
    name: opts.name,
    level: opts.level ?? 'info',
    mixin: traceLogFields(opts.format ?? 'JSON', opts.projectId),
    formatters: { log: redactLogFields },
  };
  const options: pino.LoggerOptions =
    opts.format === 'GCL'
      ? {
          ...base,
          messageKey: 'message',
          timestamp: () => `,"timestamp":"${new Date().toISOString()}"`,
          formatters: {
            log: redactLogFields,
            level: (label) => ({ severity: gclSeverity[label] ?? 'DEFAULT' }),
          },
        }
      : base;
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
