/**
 * Whether the process's open-files limit leaves room for MAX_CONNECTIONS. Each held connection is a
 * file descriptor; so are the listening sockets, the broker and store clients and the files a
 * process reads. Below the need, connections past the limit fail at accept (EMFILE) long before
 * MAX_CONNECTIONS answers its clear 503, and a deployment's connection limits are not what they say.
 */
import type { OpenFilesLimit } from '@gatehouse/service-kit';

/** Descriptors a replica holds besides its connections (sockets to brokers and store, files, listeners). */
export const OPEN_FILES_BESIDES_CONNECTIONS = 256;

export interface OpenFilesShortfall {
  needed: number;
  soft: number;
  hard: number;
}

/** The shortfall when the limit is below what `maxConnections` needs; undefined when it is not (or unknown). */
export function openFilesShortfall(
  maxConnections: number,
  limit: OpenFilesLimit | undefined,
): OpenFilesShortfall | undefined {
  if (!limit) return undefined;
  const needed = maxConnections + OPEN_FILES_BESIDES_CONNECTIONS;
  return limit.soft >= needed ? undefined : { needed, soft: limit.soft, hard: limit.hard };
}

/** The start-up warning: what is short, and the two ways out. */
export function openFilesWarning(shortfall: OpenFilesShortfall): string {
  const raise =
    shortfall.hard >= shortfall.needed
      ? `raise the soft limit (ulimit -n ${shortfall.needed}; the hard limit allows ${shortfall.hard})`
      : `raise the limit (ulimit -n, docker-compose ulimits.nofile, the container runtime's default; the hard limit is ${shortfall.hard})`;
  return `the open-files limit (RLIMIT_NOFILE ${shortfall.soft}) is below what MAX_CONNECTIONS needs (${shortfall.needed} with ${OPEN_FILES_BESIDES_CONNECTIONS} for brokers, store and files): connections past it fail at accept instead of getting a 503; ${raise}, or lower MAX_CONNECTIONS`;
}
