/**
 * kafkajs marks what may pass with time (a broker starting, a topic not listed yet, a group
 * coordinator still loading) retriable. When its own short retry budget runs out on such an error
 * it throws KafkaJSNumberOfRetriesExceeded, which it marks non-retriable: that one is judged by its
 * cause, since the condition may still pass within the caller's own deadline (seen at pod start:
 * "This is not the correct coordinator for this group" while a fresh broker loads its offsets).
 */
export function isRetriableKafkaError(err: unknown): boolean {
  const error = err as { retriable?: unknown; name?: unknown; cause?: unknown } | undefined;
  if (error?.name === 'KafkaJSNumberOfRetriesExceeded') return isRetriableKafkaError(error.cause);
  return error?.retriable === true;
}
