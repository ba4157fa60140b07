/**
 * Second-level routing (Mercury's `flows:` list): each rule is `<selector>(<matcher>) -> flow://<id>`,
 * plus one `default -> flow://<id>`. Selectors read one record header (name case-insensitive) or one
 * body path (`input.body.order.type`, `input.body[0].kind`); matchers are exact, wildcard (`*`) or
 * `regex: …`, all full-string. The first matching rule wins; a missing or non-text value is no match.
 */

export interface RoutingRule {
  readonly text: string;
  readonly flow: string;
  /** The flow of this rule when it matches the record, else undefined. */
  pick(record: RoutedRecord): string | undefined;
}

export interface RoutedRecord {
  /** Header names lower-cased. */
  headers: Record<string, string>;
  body: unknown;
}

export interface RoutingRules {
  readonly rules: readonly RoutingRule[];
  readonly fallback: string;
  /** Every flow a record may go to (checked against the loaded flows at start). */
  readonly flows: readonly string[];
}

const rulePattern = /^\s*input\.(header\.[^\s(]+|body(?:[.[][^\s(]*)?)\s*\((.*)\)\s*->\s*flow:\/\/(\S+)\s*$/;
const defaultPattern = /^\s*default\s*->\s*flow:\/\/(\S+)\s*$/;

/** The rules of a `flows:` list; throws an Error naming the first bad rule. */
export function compileRoutingRules(texts: readonly string[]): RoutingRules {
  const rules: RoutingRule[] = [];
  const fallbacks: string[] = [];
  for (const text of texts) {
    const fallback = defaultPattern.exec(text);
    if (fallback) fallbacks.push(fallback[1]!);
    else rules.push(compileRule(text));
  }
  if (fallbacks.length !== 1) throw new Error(`flows: needs exactly one 'default -> flow://<id>' rule`);
  const fallback = fallbacks[0]!;
  return { rules, fallback, flows: [...new Set([...rules.map((r) => r.flow), fallback])] };
}

/** A binding with `flow:` only: every record goes there. */
export function directRouting(flow: string): RoutingRules {
  return { rules: [], fallback: flow, flows: [flow] };
}

export function chooseFlow(routing: RoutingRules, record: RoutedRecord): string {
  for (const rule of routing.rules) {
    const flow = rule.pick(record);
    if (flow !== undefined) return flow;
  }
  return routing.fallback;
}

function compileRule(text: string): RoutingRule {
  const parts = rulePattern.exec(text);
  if (!parts) throw new Error(`flows: '${text}' is not '<selector>(<matcher>) -> flow://<id>'`);
  const [, selector, matcherText, flow] = parts as unknown as [string, string, string, string];
  const read = selectorOf(selector, text);
  const matches = matcherOf(matcherText, text);
  return {
    text,
    flow,
    pick: (record) => {
      const value = read(record);
      return typeof value === 'string' && matches(value) ? flow : undefined;
    },
  };
}

function selectorOf(selector: string, text: string): (record: RoutedRecord) => unknown {
  if (selector.startsWith('header.')) {
    const name = selector.slice('header.'.length).toLowerCase();
    return (record) => (Object.hasOwn(record.headers, name) ? record.headers[name] : undefined);
  }
  const path = bodyPath(selector.slice('body'.length), text);
  return (record) => valueAt(record.body, path);
}

/** `.a.b[0].c` → ['a', 'b', 0, 'c']. */
function bodyPath(rest: string, text: string): Array<string | number> {
  const path: Array<string | number> = [];
  const step = /\.([^.[\]]+)|\[(\d+)\]/y;
  let at = 0;
  while (at < rest.length) {
    step.lastIndex = at;
    const m = step.exec(rest);
    if (!m) throw new Error(`flows: '${text}' has a body path that is not .name or [index] steps`);
    path.push(m[1] !== undefined ? m[1] : Number(m[2]));
    at = step.lastIndex;
  }
  if (path.length === 0) throw new Error(`flows: '${text}' names the whole body; name a field in it`);
  return path;
}

function valueAt(body: unknown, path: ReadonlyArray<string | number>): unknown {
  let value = body;
  for (const key of path) {
    if (typeof key === 'number') value = Array.isArray(value) ? value[key] : undefined;
    else if (
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      Object.hasOwn(value, key)
    )
      value = (value as Record<string, unknown>)[key];
    else return undefined;
  }
  return value;
}

function matcherOf(matcher: string, text: string): (value: string) => boolean {
  const given = matcher.trim();
  if (given.startsWith('regex:')) {
    const source = given.slice('regex:'.length).trim();
    try {
      const pattern = new RegExp(`^(?:${source})$`);
      return (value) => pattern.test(value);
    } catch (err) {
      throw new Error(`flows: '${text}' has an invalid regex: ${(err as Error).message}`);
    }
  }
  if (given.includes('*')) {
    const pattern = new RegExp(`^${given.split('*').map(escapeRegExp).join('.*')}$`, 's');
    return (value) => pattern.test(value);
  }
  return (value) => value === given;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
