/**
 * What a kafkajs error means for its caller: whether it may pass with time, and which setting it
 * points at when it is the connection's security that failed (a refused password, a certificate
 * nobody trusts, a client certificate the broker refused), so start-up errors name it.
 */

/**
 * kafkajs marks what may pass with time (a broker starting, a topic not listed yet, a group
 * coordinator still loading) retriable. When its own short retry budget runs out on such an error
 * it throws KafkaJSNumberOfRetriesExceeded, which it marks non-retriable: that one is judged by its
 * cause, since the condition may still pass within the caller's own deadline (seen at pod start:
 * "This is not the correct coordinator for this group" while a fresh broker loads its offsets).
 * A security setting that fails never passes with time, though kafkajs retries its connection.
 */
export function isRetriableKafkaError(err: unknown): boolean {
  if (kafkaSettingOf(err) !== undefined) return false;
  const error = err as { retriable?: unknown; name?: unknown; cause?: unknown } | undefined;
  if (error?.name === 'KafkaJSNumberOfRetriesExceeded') return isRetriableKafkaError(error.cause);
  return error?.retriable === true;
}

/** The error's message, followed by the setting to check when it is a security failure. */
export function kafkaErrorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const setting = kafkaSettingOf(err);
  return setting === undefined ? message : `${message} (check ${setting})`;
}

/** Which setting a failed connect points at, if any. */
export function kafkaSettingOf(err: unknown): string | undefined {
  const text = errorChain(err);
  if (/KAFKA_SSL_PINNED_SHA256/.test(text)) return 'KAFKA_SSL_PINNED_SHA256';
  if (/SASL|authentication failed/i.test(text)) return 'KAFKA_SASL';
  if (
    /self[- ]signed|unable to (get|verify)|certificate (has expired|is not yet valid)|ERR_TLS_CERT_ALTNAME/i.test(
      text,
    )
  )
    return 'KAFKA_SSL_CA_CERTFILE or KAFKA_SSL_PINNED_SHA256: the broker certificate is not trusted';
  if (
    /bad certificate|certificate required|certificate unknown|unknown ca|alert number (42|46|48|116)/i.test(
      text,
    )
  )
    return 'KAFKA_SSL_CERTFILE and KAFKA_SSL_KEYFILE: the broker refused the client certificate';
  return undefined;
}

/** Messages and codes of the error and its causes (kafkajs wraps the socket's error). */
function errorChain(err: unknown): string {
  const parts: string[] = [];
  let e = err as { message?: unknown; cause?: unknown; code?: unknown; originalError?: unknown } | undefined;
  while (e && parts.length < 10) {
    parts.push(`${e.code ?? ''} ${e.message ?? ''}`);
    e = (e.cause ?? e.originalError) as typeof e;
  }
  return parts.join(' | ');
}
