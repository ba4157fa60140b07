/**
 * Imported for its effect: Ctrl-C or a SIGTERM ends the bench through `process.exit`, so that the
 * `exit` handlers run that kill the children it started (testkit's spawnService, the pinned hubs).
 * Node's default for these signals ends the process without them, leaving replicas behind.
 */
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
}
