/**
 * XML in both directions. Writing: keys sorted, two-space indent, lists repeat their element (a list
 * at the top is wrapped in the root element, as Mercury renders it), text
 * escaped, element names reduced to `[0-9A-Za-z_-]`. Reading: a document becomes a plain object
 * (the root element dropped, attributes as keys, values as strings), via fast-xml-parser; one whose
 * elements nest more than the highest MAX_JSON_DEPTH throws XmlTooDeepError, one with more
 * elements and attributes than asked XmlTooLargeError, counted as they are parsed, and one with a
 * DOCTYPE XmlDoctypeError (entities, so every XML bomb, stay out).
 */
import { maxJsonDepthCeiling } from '@gatehouse/service-kit';
import { XMLParser } from 'fast-xml-parser';

export function toXml(value: unknown, root = 'result'): string {
  // A list at the top keeps its level: `<result><result>item</result>…</result>` (one root).
  const top = Array.isArray(value) ? { [root]: value } : value;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${element(root, top, '')}`;
}

function element(name: string, value: unknown, indent: string): string {
  const tag = name.replace(/[^0-9A-Za-z_-]/g, '_') || '_';
  if (value === null || value === undefined) return `${indent}<${tag}/>`;
  if (Array.isArray(value)) return value.map((v) => element(tag, v, indent)).join('\n');
  if (typeof value === 'object' && !Buffer.isBuffer(value)) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== null && v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (entries.length === 0) return `${indent}<${tag}/>`;
    const inner = entries.map(([k, v]) => element(k, v, `${indent}  `)).join('\n');
    return `${indent}<${tag}>\n${inner}\n${indent}</${tag}>`;
  }
  const text = Buffer.isBuffer(value) ? value.toString('base64') : String(value);
  return `${indent}<${tag}>${escapeXml(text)}</${tag}>`;
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => xmlEntities[c]!);
}

const xmlEntities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

/** How many more elements and attributes the document being parsed may have (parsing is synchronous). */
let nodesLeft = Number.POSITIVE_INFINITY;

/** Counts one element or attribute; throws once past the bound, which stops the parser there. */
function countNode(): void {
  if (--nodesLeft < 0) throw new XmlTooLargeError();
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  textNodeName: 'value',
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  trimValues: true,
  // Its default (100) is below MAX_JSON_DEPTH's; the body's depth is checked after parsing.
  maxNestedTags: maxJsonDepthCeiling,
  // Counted while parsing: 100,000 elements take about half a second, far more than their bytes.
  updateTag: () => {
    countNode();
    return true;
  },
  attributeValueProcessor: () => {
    countNode();
    return undefined;
  },
  // Entities declared in the document expand at most this far (billion laughs, quadratic blow-up).
  processEntities: { enabled: true, maxTotalExpansions: 10_000, maxExpandedLength: 100_000 },
});

/** A document whose elements nest deeper than the parser takes (maxNestedTags). */
export class XmlTooDeepError extends Error {
  override readonly name = 'XmlTooDeepError';
}

/**
 * A document with a document type declaration: its entities are the way to every XML bomb
 * (billion laughs, quadratic blow-up, external entities); bodies have no use for them.
 */
export class XmlDoctypeError extends Error {
  override readonly name = 'XmlDoctypeError';
}

/** A document with more elements and attributes than the caller allows. */
export class XmlTooLargeError extends Error {
  override readonly name = 'XmlTooLargeError';
}

/**
 * The document as an object without its root element; throws on malformed XML, XmlTooDeepError
 * past the nesting the parser takes and XmlTooLargeError past `maxNodes` elements and attributes.
 */
export function parseXml(text: string, maxNodes = Number.POSITIVE_INFINITY): Record<string, unknown> {
  // fast-xml-parser validates the whole document first and reads all attributes of a tag before it
  // reports any: a scan stops what is surely too large before that costs seconds. Each attribute
  // has its `=`, each element one or two `<`.
  if (text.includes('<!DOCTYPE')) throw new XmlDoctypeError('XML with a DOCTYPE is refused');
  if (occurrences(text, '=') > maxNodes || occurrences(text, '<') > 2 * maxNodes + 2)
    throw new XmlTooLargeError();
  let doc: Record<string, unknown>;
  nodesLeft = maxNodes;
  try {
    doc = parser.parse(text, true) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof XmlTooLargeError || err instanceof XmlDoctypeError) throw err;
    // fast-xml-parser says so only in its message.
    if (/Maximum nested tags exceeded/.test((err as Error).message))
      throw new XmlTooDeepError((err as Error).message);
    throw err;
  } finally {
    nodesLeft = Number.POSITIVE_INFINITY;
  }
  const roots = Object.values(doc);
  if (roots.length !== 1) throw new Error('XML document must have one root element');
  const root = roots[0];
  if (typeof root === 'object' && root !== null) return root as Record<string, unknown>;
  return root === '' || root === undefined ? {} : { value: String(root) };
}

function occurrences(text: string, char: string): number {
  let count = 0;
  for (let i = text.indexOf(char); i >= 0; i = text.indexOf(char, i + 1)) count++;
  return count;
}
