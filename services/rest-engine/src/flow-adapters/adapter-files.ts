/**
 * Reads kafka-flow-adapter.yaml and nats-flow-adapter.yaml (`yaml.kafka.flow.adapter`,
 * `yaml.nats.flow.adapter`), checks them against flow-adapter.schema.json and Mercury's own rules
 * (a pattern names its group, a dead-letter topic is not its own source, routing rules parse) and
 * makes the bindings. Unlike rest.yaml, where a bad entry is skipped, any problem stops start-up:
 * a binding left out silently would leave its topic unread.
 */
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError } from '@gatehouse/service-kit';
import { parseDocument } from 'yaml';
import { type AppProperties, resolveLocation, type RestSettings } from '../config/index.ts';
import { type AdapterDocumentKind, adapterSchemaErrors } from './adapter-schema.ts';
import type { Binding, KafkaBinding, NatsBinding } from './binding.ts';
import { compileRoutingRules, directRouting, type RoutingRules } from './routing-rules.ts';

type Entry = Record<string, unknown>;

const fileSetting = { kafka: 'yaml.kafka.flow.adapter', nats: 'yaml.nats.flow.adapter' } as const;

/** Every binding of the configured files; throws a ConfigError naming each problem. */
export function loadBindings(settings: RestSettings, props: AppProperties): Binding[] {
  const problems: string[] = [];
  const bindings: Binding[] = [];
  for (const kind of ['kafka', 'nats'] as const) {
    const location = settings[fileSetting[kind]]?.trim() ?? '';
    if (location === '') continue;
    const path = resolveLocation(location, settings.configFolder);
    const entries = readEntries(kind, path, props, problems);
    entries.forEach((entry, i) => {
      const where = `${path}: consumer.${i}`;
      try {
        bindings.push(kind === 'kafka' ? kafkaBinding(entry, settings) : natsBinding(entry, settings));
      } catch (err) {
        problems.push(`${where}: ${(err as Error).message}`);
      }
    });
  }
  const max = settings['flow.adapter.max-bindings'];
  if (bindings.length > max)
    problems.push(`${bindings.length} flow adapter bindings, more than flow.adapter.max-bindings (${max})`);
  const labels = bindings.map((b) => `${b.label} ${b.kind === 'kafka' ? b.group : b.queue}`);
  for (const twice of new Set(labels.filter((l, i) => labels.indexOf(l) !== i)))
    problems.push(
      `two bindings read ${twice.replace(' ', ' in group ')}: one of them would see half the records`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  return bindings;
}

function readEntries(
  kind: AdapterDocumentKind,
  path: string,
  props: AppProperties,
  problems: string[],
): Entry[] {
  if (!existsSync(path)) {
    problems.push(`${fileSetting[kind]}: ${path} not found`);
    return [];
  }
  const doc = parseDocument(readFileSync(path, 'utf8'), { prettyErrors: true });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    problems.push(`${pos ? `${path}:${pos.line}:${pos.col}` : path}: ${first.message.split('\n')[0]}`);
    return [];
  }
  const value = substituteAll(doc.toJS(), props);
  const errors = adapterSchemaErrors(kind, value);
  if (errors.length > 0) {
    problems.push(...errors.map((e) => `${path}: ${e}`));
    return [];
  }
  return (value as { consumer: Entry[] }).consumer;
}

function kafkaBinding(e: Entry, settings: RestSettings): KafkaBinding {
  const topic = e['topic'] as string | undefined;
  const patternText = e['topic-pattern'] as string | undefined;
  const pattern = patternText === undefined ? undefined : fullMatch(patternText);
  const group =
    (e['group'] as string | undefined) ?? (topic === undefined ? undefined : `kafka-flow-adapter.${topic}`);
  if (group === undefined) throw new Error('a topic-pattern binding must name its group');
  const dlqTopic = e['dlq-topic'] as string | undefined;
  if (dlqTopic !== undefined && (dlqTopic === topic || pattern?.test(dlqTopic)))
    throw new Error(
      `dlq-topic ${dlqTopic} is read by the binding itself: a dead-lettered record would fail forever`,
    );
  return {
    kind: 'kafka',
    label: topic === undefined ? `kafka:/${patternText}/` : `kafka:${topic}`,
    topic,
    pattern,
    group,
    partition: e['partition'] as number | undefined,
    dlqTopic,
    autoCommit: e['auto-commit'] === true,
    ...common(e, settings),
  };
}

function natsBinding(e: Entry, settings: RestSettings): NatsBinding {
  const subject = e['subject'] as string;
  const dlqSubject = e['dlq-subject'] as string | undefined;
  if (dlqSubject !== undefined && subjectMatches(subject, dlqSubject))
    throw new Error(
      `dlq-subject ${dlqSubject} is read by the binding itself: a dead-lettered message would fail forever`,
    );
  return {
    kind: 'nats',
    label: `nats:${subject}`,
    subject,
    queue: (e['queue'] as string | undefined) ?? `nats-flow-adapter.${subject.replace(/[*>]/g, '_')}`,
    stream: e['stream'] as string | undefined,
    dlqSubject,
    ...common(e, settings),
  };
}

function common(e: Entry, settings: RestSettings) {
  const most = settings['flow.adapter.max-in-flight'];
  const asked = e['max-in-flight'] as number | undefined;
  if (asked !== undefined && asked > most)
    throw new Error(`max-in-flight ${asked} is above flow.adapter.max-in-flight (${most})`);
  return {
    routing: routingOf(e),
    serializer: e['serializer'] as 'json' | undefined,
    maxInFlight: asked ?? most,
    correlationHeader: ((e['correlation.id.header'] as string | undefined) ?? 'cid').toLowerCase(),
    traceparentHeader: ((e['traceparent.header'] as string | undefined) ?? 'traceparent').toLowerCase(),
  };
}

function routingOf(e: Entry): RoutingRules {
  const flow = e['flow'] as string | undefined;
  return flow === undefined ? compileRoutingRules(e['flows'] as string[]) : directRouting(flow);
}

function fullMatch(source: string): RegExp {
  try {
    return new RegExp(`^(?:${source})$`);
  } catch (err) {
    throw new Error(`topic-pattern ${source} is no regular expression: ${(err as Error).message}`);
  }
}

/** NATS wildcards: `*` one token, `>` the rest. */
function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length || (f[i] !== '*' && f[i] !== s[i])) return false;
  }
  return f.length === s.length;
}

function substituteAll(value: unknown, props: AppProperties): unknown {
  if (typeof value === 'string') return props.substitute(value);
  if (Array.isArray(value)) return value.map((v) => substituteAll(v, props));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteAll(v, props)]));
  return value;
}
