/** kafkajs marks what may pass with time (a broker starting, a topic not listed yet) retriable. */
export function isRetriableKafkaError(err: unknown): boolean {
  return (err as { retriable?: unknown } | undefined)?.retriable === true;
}
