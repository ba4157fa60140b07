/**
 * The W3C Trace Context `traceparent` header: `version-traceid-parentid-traceflags`, e.g.
 * `00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01`.
 *
 * Parsing follows the Recommendation: lower-case hex only, all-zero ids rejected, version `ff`
 * rejected, version 00 exactly 55 characters. A higher version is parsed by the forward-compatibility
 * rules (the 00 fields at the 00 positions, then the end or a dash) and only its sampled flag is
 * kept, since the meaning of its other bits is unknown to us. Formatting always writes version 00,
 * the highest we know, which is the "downgrade the version" mutation the spec asks for.
 * Anything unparsable gives undefined: the caller then starts a new trace.
 */

export interface TraceParent {
  /** Two lower-case hex digits, as received (formatting always writes `00`). */
  version: string;
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** The caller's span id: 16 lower-case hex digits, not all zero. */
  parentId: string;
  /** The trace-flags byte; bit 0 is `sampled`. */
  traceFlags: number;
}

export const sampledFlag = 0x01;
export const supportedTraceParentVersion = '00';

const version00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const futureVersion = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/s;
const allZero = /^0+$/;

/**
 * Parses a header value; an array (the header sent more than once) is invalid, as is anything else
 * that breaks the grammar. Surrounding spaces and tabs (HTTP optional whitespace) are ignored.
 */
export function parseTraceParent(header: string | readonly string[] | undefined): TraceParent | undefined {
  const value = typeof header === 'string' ? header : header?.length === 1 ? header[0] : undefined;
  if (value === undefined) return undefined;
  const text = value.replace(/^[ \t]+|[ \t]+$/g, '');
  const m = version00.exec(text);
  if (m)
    return withValidIds({ version: '00', traceId: m[1]!, parentId: m[2]!, traceFlags: parseInt(m[3]!, 16) });
  const future = futureVersion.exec(text);
  if (!future || future[1] === '00' || future[1] === 'ff') return undefined;
  return withValidIds({
    version: future[1]!,
    traceId: future[2]!,
    parentId: future[3]!,
    traceFlags: parseInt(future[4]!, 16) & sampledFlag,
  });
}

export function formatTraceParent(
  traceParent: Pick<TraceParent, 'traceId' | 'parentId' | 'traceFlags'>,
): string {
  const { traceId, parentId, traceFlags } = traceParent;
  if (!isValidTraceId(traceId)) throw new TypeError(`invalid trace id '${traceId}'`);
  if (!isValidParentId(parentId)) throw new TypeError(`invalid parent id '${parentId}'`);
  if (!Number.isInteger(traceFlags) || traceFlags < 0 || traceFlags > 0xff) {
    throw new TypeError(`invalid trace flags ${traceFlags}`);
  }
  return `${supportedTraceParentVersion}-${traceId}-${parentId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

export function isSampled(traceParent: Pick<TraceParent, 'traceFlags'>): boolean {
  return (traceParent.traceFlags & sampledFlag) === sampledFlag;
}

export function isValidTraceId(id: string): boolean {
  return /^[0-9a-f]{32}$/.test(id) && !allZero.test(id);
}

export function isValidParentId(id: string): boolean {
  return /^[0-9a-f]{16}$/.test(id) && !allZero.test(id);
}

function withValidIds(traceParent: TraceParent): TraceParent | undefined {
  return isValidTraceId(traceParent.traceId) && isValidParentId(traceParent.parentId)
    ? traceParent
    : undefined;
}
