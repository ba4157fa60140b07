/**
 * node:http keeps an HTTP parser for every HTTP/1 connection it serves, to read the connection's
 * next request: about 10 KB of native memory, most of what a held SSE stream costs
 * (bench/results, memory per connection). A response sent with `Connection: close` is its
 * connection's last one, so nothing the client sends after it will be read: this gives the parser
 * back the way node's own upgrade path does (`_http_server`'s `onParserExecuteCommon`).
 *
 * From then on the connection is the caller's stream and its socket, with node's parts that need
 * no parser left in place (the response's `close` when the socket closes, the pending request
 * aborted, errors). What the parser did with the client's bytes is done here: the client's end of
 * the connection closes it, as node does (an edge's sockets allow half-open ones), and so does any
 * byte more (nothing a client sends after a request it awaits a stream for; node would have read
 * it as a next request, answered after a stream that never ends).
 *
 * Node's server no longer lists the connection (`closeAllConnections` misses it): the service host
 * cuts a stop's leftover connections from its own list of them (service-host.ts).
 *
 * It leans on node 24's internals: the names of the listeners `_http_server` puts on a socket.
 * When they are not found (another node), the parser is kept and nothing changes; the unit test
 * fails on such a node, so an upgrade that breaks it is seen.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface HttpParser {
  _consumed?: boolean;
  unconsume(): void;
}

interface ParsedSocket extends Socket {
  parser?: HttpParser | null;
  _handle?: { reading: boolean; readStart(): void } | null;
}

interface LastResponse extends ServerResponse {
  _last?: boolean;
}

const { freeParser } = process.getBuiltinModule('_http_common') as {
  freeParser: (parser: HttpParser, req: IncomingMessage | null, socket: Socket | null) => void;
};

/** The listeners `_http_server` adds to each socket that read through the parser. */
const nodeListeners: Array<[event: string, name: string]> = [
  ['data', 'bound socketOnData'],
  ['end', 'bound socketOnEnd'],
  ['pause', 'onSocketPause'],
  ['resume', 'onSocketResume'],
];

let queued: Array<[IncomingMessage, ServerResponse]> = [];

/**
 * The connections a stream was started on. A request node read on one of them after the stream
 * (pipelined in the same packet, before the parser was given back) could only wait for ever behind
 * it, holding its place under the connection limits: the host closes the connection instead
 * (`carriesStream`), and so does a second stream started on it.
 */
const streamConnections = new WeakSet<Socket>();

/** Whether a stream was started on this connection (see streamConnections). */
export const carriesStream = (socket: Socket): boolean => streamConnections.has(socket);

/**
 * Gives the parser back once the current turn is over: a request handler runs inside the parser's
 * own call (node frees it only after that call returns). Call it once the response's head is
 * written; a response queued behind another on its connection gives it back once it has the
 * connection.
 */
export function releaseHttpParserSoon(req: IncomingMessage, res: ServerResponse): void {
  if (req.httpVersionMajor !== 1 || (res as LastResponse)._last !== true) return;
  const socket = req.socket;
  if (streamConnections.has(socket)) {
    // A second stream on one connection: one of them would wait behind the other for ever.
    socket.destroy();
    return;
  }
  streamConnections.add(socket);
  if (res.socket === socket) queueRelease(req, res);
  else res.once('socket', () => queueRelease(req, res));
}

function queueRelease(req: IncomingMessage, res: ServerResponse): void {
  if (queued.length === 0) setImmediate(releaseQueued);
  queued.push([req, res]);
}

function releaseQueued(): void {
  const now = queued;
  queued = [];
  for (const [req, res] of now) releaseHttpParser(req, res);
}

/**
 * Whether the connection's parser was given back. releaseHttpParserSoon checked what the head
 * settled (HTTP/1, the connection's last response); this checks what a turn can change.
 */
function releaseHttpParser(req: IncomingMessage, res: ServerResponse): boolean {
  const socket = req.socket as ParsedSocket;
  const parser = socket.parser;
  if (!parser || res.socket !== socket || socket.destroyed || res.writableEnded) return false;
  const found = nodeListeners.map(([event, name]) => socket.listeners(event).find((l) => l.name === name));
  if (found[0] === undefined || found[1] === undefined) return false;
  nodeListeners.forEach(([event], i) => {
    const listener = found[i];
    if (listener) socket.removeListener(event, listener as (...args: unknown[]) => void);
  });
  if (parser._consumed) parser.unconsume();
  parser._consumed = false;
  freeParser(parser, req, socket);
  socket.on('data', closeOnMore);
  socket.on('end', closeOnMore);
  // A body node buffered for the request (nobody reads an SSE request's) is dropped; when there
  // was more of it than node buffers, node had stopped reading the socket: read on, so that the
  // rest closes the connection as any byte more does.
  req.resume();
  socket.resume();
  // Node's parser read straight from the handle and stopped it (its `onSocketPause`); the socket's
  // stream still thinks a read is under way, so `resume` alone starts nothing. As `onSocketResume`.
  const handle = socket._handle;
  if (handle && !handle.reading) {
    handle.reading = true;
    handle.readStart();
  }
  return true;
}

/** Shared by every released socket (`this`): a connection gets no closure of its own. */
function closeOnMore(this: Socket): void {
  this.destroy();
}
