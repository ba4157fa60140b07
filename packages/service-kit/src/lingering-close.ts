/**
 * A request answered before its body was read to its end (413, 400, 408) is read on and dropped
 * for a moment before its connection is closed. Closing a socket with unread bytes makes the
 * kernel send RST, and a client that is still sending then loses the answer that was already on
 * its way (RFC 9112 §9.6; nginx's `lingering_close`). Reading on for ever would let a body that
 * never ends hold the connection, so the linger is bounded in time and in bytes.
 */
import type { IncomingMessage } from 'node:http';

/** How long, and how much more, an answered request is read before its connection is closed. */
export const lingerBounds = { ms: 1000, bytes: 16 * 1024 * 1024 };

/**
 * Drops the rest of `req`'s body; if it has not ended within the bounds, destroys the connection.
 * A body that ends in time leaves the connection as it was (kept alive if the answer said so).
 */
export function lingerThenClose(req: IncomingMessage, bounds = lingerBounds): void {
  if (req.complete || req.destroyed) return;
  let dropped = 0;
  const close = () => {
    clearTimeout(timer);
    req.socket.destroy();
  };
  const timer = setTimeout(close, bounds.ms);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > bounds.bytes) close();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.on('error', () => clearTimeout(timer));
  req.resume();
}
