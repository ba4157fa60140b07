/**
 * Structured logs with pino. `LOG_FMT=JSON` (default) writes pino's JSON lines; `GCL` writes the
 * Google Cloud Logging shape (`severity`, `message`, `timestamp`) so the platform parses levels.
 * A line written inside a traced request or event carries its trace and span ids
 * (log-trace-fields.ts).
 */
import { pino, type Logger } from 'pino';
import { traceLogFields } from './log-trace-fields.ts';

export type { Logger } from 'pino';
export type LogFormat = 'JSON' | 'GCL';
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

export function createLogger(opts: LoggerOptions): Logger {
  const base: pino.LoggerOptions = {
    name: opts.name,
    level: opts.level ?? 'info',
    mixin: traceLogFields(opts.format ?? 'JSON', opts.projectId),
  };
  const options: pino.LoggerOptions =
    opts.format === 'GCL'
      ? {
          ...base,
          messageKey: 'message',
          timestamp: () => `,"timestamp":"${new Date().toISOString()}"`,
          formatters: { level: (label) => ({ severity: gclSeverity[label] ?? 'DEFAULT' }) },
        }
      : base;
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
