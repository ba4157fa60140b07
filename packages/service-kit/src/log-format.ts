/**
 * The shape of a log line, LOG_FMT (logger.ts). A file of its own because the logger and the trace
 * fields it adds to each line (log-trace-fields.ts), which differ per format, both read it: the
 * logger imports the trace fields, so the type cannot live in the logger.
 */
export type LogFormat = 'JSON' | 'GCL';
