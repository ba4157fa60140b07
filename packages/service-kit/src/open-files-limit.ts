/**
 * The process's open-files limit (RLIMIT_NOFILE), read from /proc/self/limits: Node has no
 * getrlimit. Every connection a service holds is a file descriptor, so this limit, not a setting
 * of ours, is what ends a replica's connections first when it is low (EMFILE at accept).
 */
import { readFileSync } from 'node:fs';

export interface OpenFilesLimit {
  /** The limit the process runs under (Infinity: unlimited). */
  soft: number;
  /** How far the process could raise it (`ulimit -n` up to this). */
  hard: number;
}

/** The limit from the text of /proc/<pid>/limits; undefined when the line is missing or unreadable. */
export function parseOpenFilesLimit(limitsText: string): OpenFilesLimit | undefined {
  const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limitsText);
  if (!line) return undefined;
  const value = (text: string) => (text === 'unlimited' ? Number.POSITIVE_INFINITY : Number(text));
  const [soft, hard] = [value(line[1]!), value(line[2]!)];
  return Number.isNaN(soft) || Number.isNaN(hard) ? undefined : { soft, hard };
}

/** This process's limit; undefined where /proc is not there (not Linux). */
export function openFilesLimit(): OpenFilesLimit | undefined {
  try {
    return parseOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return undefined;
  }
}
