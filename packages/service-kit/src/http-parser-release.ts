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
 * Node's server no longer lists the connection (`closeAllConnections` misses it), so each is kept
 * here by server until it closes: `closeReleasedConnections` cuts them at a stop's deadline.
 *
 * It leans on node 24's internals: the names of the listeners `_http_server` puts on a socket.
 * When they are not found (another node), the parser is kept and nothing changes; the unit test
 * fails on such a node, so an upgrade that breaks it is seen.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface HttpParser {
  _consumed?: boolean;
  unconsume(): void;
}

interface ParsedSocket extends Socket {
  parser?: HttpParser | null;
  server?: Server;
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

/** The released connections of each server, until they close. */
const released = new WeakMap<Server, Set<Socket>>();

let queued: Array<[IncomingMessage, ServerResponse]> = [];

/**
 * Gives the parser back once the current turn is over: a request handler runs inside the parser's
 * own call (node frees it only after that call returns). Call it once the response's head is sent.
 */
export function releaseHttpParserSoon(req: IncomingMessage, res: ServerResponse): void {
  if (queued.length === 0) setImmediate(releaseQueued);
  queued.push([req, res]);
}

function releaseQueued(): void {
  const now = queued;
  queued = [];
  for (const [req, res] of now) releaseHttpParser(req, res);
}

/** Whether the connection's parser was given back (see the top of this file for when it is). */
export function releaseHttpParser(req: IncomingMessage, res: ServerResponse): boolean {
  const socket = req.socket as ParsedSocket;
  const parser = socket.parser;
  // The response has the socket (not one pipelined behind another), is the connection's last, and
  // is under way; HTTP/2 has no such parser.
  if (!parser || res.socket !== socket || (res as LastResponse)._last !== true) return false;
  if (socket.destroyed || res.writableEnded || req.httpVersionMajor !== 1) return false;
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
  const server = socket.server;
  if (server) {
    let sockets = released.get(server);
    if (sockets === undefined) {
      sockets = new Set();
      released.set(server, sockets);
    }
    sockets.add(socket);
    socket.once('close', forgetReleased);
  }
  return true;
}

/** Shared by every released socket (`this`): a connection gets no closure of its own. */
function closeOnMore(this: Socket): void {
  this.destroy();
}

function forgetReleased(this: ParsedSocket): void {
  if (this.server) released.get(this.server)?.delete(this);
}

/** Cuts every released connection of `server` (its stop's deadline: `closeAllConnections` misses them). */
export function closeReleasedConnections(server: Server): void {
  for (const socket of released.get(server) ?? []) socket.destroy();
}
