/**
 * How many object keys and array items JSON text holds, across every level, counted on the bytes
 * before anything parses them. Parsing, copying, serialising and matching an event all cost per
 * key: a 1 MiB event of 90,000 keys held the publisher 0.2–0.5 s per post, where one of a few
 * hundred keys costs microseconds. The scan costs a few milliseconds per MiB and stops as soon as
 * the bound is passed, so a refusal costs less than the parse it saves.
 *
 * It follows strings (a `:` or `,` inside one is data) and the open containers; it does not
 * validate: malformed text gets some count and is refused by the parser after.
 */
import { HttpError } from './http-response.ts';

const quote = 0x22;
const backslash = 0x5c;
const colon = 0x3a;
const comma = 0x2c;
const openArray = 0x5b;
const closeArray = 0x5d;
const openObject = 0x7b;
const closeObject = 0x7d;
const space = 0x20;
const tab = 0x09;
const newline = 0x0a;
const carriageReturn = 0x0d;

/** A 413 naming the limit; `what` says which input it was (`the event`). */
export class JsonTooManyMembersError extends HttpError {
  readonly maxMembers: number;
  constructor(what: string, setting: string, maxMembers: number) {
    super(413, `${what} has more than ${maxMembers} keys and array items (${setting})`);
    this.name = 'JsonTooManyMembersError';
    this.maxMembers = maxMembers;
  }
}

/**
 * True when the JSON text has more than `max` object keys and array items together (`{"a":[1,2]}`
 * has three). Reads no further than the member past the bound.
 */
export function exceedsJsonMembers(bytes: Uint8Array, max: number): boolean {
  // Per open container: whether it is an array, and whether its next item is yet to be counted.
  const arrays: boolean[] = [];
  const waiting: boolean[] = [];
  let count = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === backslash) i++;
      else if (c === quote) inString = false;
      continue;
    }
    switch (c) {
      case quote:
        inString = true;
        if (countsItem(arrays, waiting) && ++count > max) return true;
        break;
      case colon:
        if (++count > max) return true;
        break;
      case comma:
        // The next item is counted when it starts (a key by its colon).
        if (arrays.at(-1) === true) waiting[waiting.length - 1] = true;
        break;
      case openArray:
      case openObject:
        if (countsItem(arrays, waiting) && ++count > max) return true;
        arrays.push(c === openArray);
        waiting.push(c === openArray);
        break;
      case closeArray:
      case closeObject:
        arrays.pop();
        waiting.pop();
        break;
      case space:
      case tab:
      case newline:
      case carriageReturn:
        break;
      default:
        // A number, true, false or null: its first byte starts an item.
        if (countsItem(arrays, waiting) && ++count > max) return true;
    }
  }
  return false;
}

/** Whether a value starting here is a new item of the array it is in (then that array has one). */
function countsItem(arrays: boolean[], waiting: boolean[]): boolean {
  const last = waiting.length - 1;
  if (last < 0 || !arrays[last] || !waiting[last]) return false;
  waiting[last] = false;
  return true;
}
