/**
 * The hub hands the same OutgoingEvent object to every matching connection, so what a transport
 * writes for it (its frame, its bytes) is made for the first of them and reused by the others,
 * rather than once per connection.
 */
import type { OutgoingEvent } from '../connections/index.ts';

export function oncePerEvent<T>(encode: (e: OutgoingEvent) => T): (e: OutgoingEvent) => T {
  let last: OutgoingEvent | undefined;
  let value: T;
  return (e) => {
    if (e !== last) {
      value = encode(e);
      last = e;
    }
    return value;
  };
}
