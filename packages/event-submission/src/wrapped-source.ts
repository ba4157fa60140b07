/**
 * The sources the publisher gives the events it wraps from source topics (`kafka/<topic>`,
 * `nats/<subject>`, `kinesis/<stream>`, with the message's position as id) are its own namespace.
 * Those ids are guessable (`0-1234`), and the hubs drop an event whose source and id they hold
 * already: an HTTP producer who posted `kafka/orders` / `0-1234` first would get their event
 * delivered and the real one dropped. So no HTTP producer may use a source in this namespace.
 */
const sourceTopicKinds = ['kafka', 'nats', 'kinesis'] as const;

/** The source of an event wrapped from a message of `topic` on a `kind` source. */
export function wrappedSource(kind: string, topic: string): string {
  return `${kind}/${topic}`;
}

/** Why an HTTP producer may not use `source`, or undefined when it may. */
export function reservedSourceProblem(source: unknown): string | undefined {
  if (typeof source !== 'string') return undefined;
  const kind = sourceTopicKinds.find((k) => source.startsWith(`${k}/`));
  if (kind === undefined) return undefined;
  return `'source' ${JSON.stringify(source.slice(0, 200))} is reserved: sources under ${sourceTopicKinds
    .map((k) => `${k}/`)
    .join(
      ', ',
    )} name the events the gateway wraps from its source topics, so an HTTP producer may not use them`;
}
