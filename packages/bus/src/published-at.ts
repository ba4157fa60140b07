/**
 * When a message was handed to the broker, as a header the producer sets (milliseconds since the
 * epoch), so a consumer can tell how far behind the stream it is: the publisher stamps every
 * fan-out event, the push hub measures publish → delivered (gw_fanout_delivery_seconds). A header,
 * not a CloudEvent attribute: clients get the event exactly as it was published. Buses without
 * headers (Kinesis) carry no stamp, and their consumers measure nothing.
 */
export const publishedAtHeader = 'gw-published-at';

export function publishedAtHeaders(now = Date.now()): Record<string, string> {
  return { [publishedAtHeader]: String(now) };
}

/** The stamp of a message, or undefined when it has none or not one of ours (digits only). */
export function readPublishedAt(headers: Record<string, string>): number | undefined {
  const value = headers[publishedAtHeader];
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}
