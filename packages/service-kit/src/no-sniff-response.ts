/**
 * The public edge's HTTP/1.1 response: every head it writes carries
 * `X-Content-Type-Options: nosniff` (a browser must never sniff an answer, an error that echoes
 * client input above all, into HTML), added as the head is written rather than set on each request.
 *
 * Why not `setHeader` as every request comes in: a response with a header set that way takes
 * node's slow `writeHead` path, which turns every header of the head into a header entry of its
 * own (about 3 KB of garbage per response). A head given whole, with nosniff in it (the push hub's
 * SSE head), now takes the fast path, as a bare node:http server's does; any other head gets the
 * header added first, as before. `end()` or `write()` without a `writeHead` goes through
 * `writeHead` too (node's `_implicitHeader`).
 */
import {
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  ServerResponse,
} from 'node:http';

export const NO_SNIFF_HEADER = 'x-content-type-options';

export class NoSniffResponse<
  Request extends IncomingMessage = IncomingMessage,
> extends ServerResponse<Request> {
  override writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const given = typeof reason === 'string' ? headers : reason;
    // A value a handler chose (or an upstream's, proxied) is kept, as it was when the edge set
    // nosniff first and the handler overwrote it.
    if (!namesNoSniff(given) && !this.hasHeader(NO_SNIFF_HEADER)) this.setHeader(NO_SNIFF_HEADER, 'nosniff');
    return super.writeHead(statusCode, reason as string, headers);
  }
}

/** Whether a head given to writeHead has the header (an object's own key; a list is not searched). */
function namesNoSniff(head: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined): boolean {
  return head !== undefined && !Array.isArray(head) && head[NO_SNIFF_HEADER] !== undefined;
}
