/**
 * node:http keeps a response's head as text (`_header`, ~280 B for an SSE stream's) for as long as
 * the response lives, but once the head has gone out (`_headerSent`) it only asks whether there is
 * one: every read of it in node 24's `_http_outgoing` and `_http_server` is a truth test
 * (`headersSent`, "headers already sent" errors, whether to write the head implicitly). A stream
 * lives for hours, so its head is swapped for one shared marker as soon as it is sent.
 */
import type { ServerResponse } from 'node:http';

/** What `_header` holds once the head is sent: any non-empty text keeps node's truth tests true. */
const SENT = 'sent';

interface HeadOfResponse {
  _header?: string | null;
  _headerSent?: boolean;
}

/** Frees the text of a head already sent (HTTP/1.1; an HTTP/2 response has no such field). */
export function forgetSentHead(res: ServerResponse): void {
  const head = res as unknown as HeadOfResponse;
  if (head._headerSent === true && typeof head._header === 'string') head._header = SENT;
}
