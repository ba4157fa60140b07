/**
 * Where a flow's `kafka.notification` / `nats.notification` may publish. A flow may build its topic
 * from request data, and a broker publishes wherever it is told, so without a bound a caller of the
 * public edge could write any topic the engine's credentials reach. Two rules, checked before any
 * broker is asked (403):
 * - FLOW_NOTIFICATION_TOPICS names the topics and subjects flows may publish to: an entry names one
 *   exactly, or ends in `*` and names every one that starts with the rest (`orders.*`); a lone `*`
 *   allows any. Unset, flows publish nowhere: the operator opens what the flows need.
 * - a prefix entry (or `*`) lets callers name new topics, and each costs the broker (a JetStream
 *   stream per NATS subject, a topic where Kafka auto-creates them) and this process (a bus's
 *   per-topic state): at most FLOW_NOTIFICATION_MAX_TOPICS of them are published to per process;
 *   a new one beyond is refused, those published to before and exact entries stay open.
 * - whatever the list says, never the gateway's own names, whose records the gateway trusts: the
 *   fan-out stream (FANOUT_TOPIC and, on NATS, its routed subjects under it), `gw` and `gw.…` (the
 *   replicas' control subjects, the default source topic), nor the brokers' and their tools' own:
 *   Kafka's `__…` and the schema registry's `_schemas` (every name starting with `_`), NATS's
 *   `$JS.API`, `$SYS`, `$KV` (every name starting with `$`) and reply inboxes `_INBOX.…`.
 */
export class NotificationDestinations {
  private readonly any: boolean;
  private readonly names: Set<string>;
  private readonly prefixes: string[];
  private readonly fanoutTopic: string;
  private readonly maxMade: number;
  /** Topics published to through a prefix entry or `*`. */
  private readonly made = new Set<string>();

  constructor(allowed: readonly string[], fanoutTopic: string, maxMade: number) {
    const entries = allowed.map((e) => e.trim()).filter((e) => e !== '');
    this.any = entries.includes('*');
    this.names = new Set(entries.filter((e) => !e.endsWith('*')));
    this.prefixes = entries.filter((e) => e.endsWith('*')).map((e) => e.slice(0, -1));
    this.fanoutTopic = fanoutTopic;
    this.maxMade = maxMade;
  }

  /** Why a flow may not publish to `topic`, or undefined when it may. */
  problem(topic: string): string | undefined {
    const reserved = this.reservedProblem(topic);
    if (reserved) return reserved;
    if (this.names.has(topic) || this.made.has(topic)) return undefined;
    if (!this.any && !this.prefixes.some((p) => topic.startsWith(p)))
      return `${JSON.stringify(topic)} is not a topic flows may publish to (FLOW_NOTIFICATION_TOPICS)`;
    if (this.made.size >= this.maxMade)
      return `${JSON.stringify(topic)} would be one topic more than FLOW_NOTIFICATION_MAX_TOPICS (${this.maxMade}) flows publish to`;
    return undefined;
  }

  /** Counts `topic` once a publish to it succeeded, when a prefix entry or `*` let it in. */
  published(topic: string): void {
    if (!this.names.has(topic) && this.made.size < this.maxMade) this.made.add(topic);
  }

  private reservedProblem(topic: string): string | undefined {
    if (topic === this.fanoutTopic || topic.startsWith(`${this.fanoutTopic}.`))
      return `${JSON.stringify(topic)} is the fan-out stream: a flow puts events there with gatehouse.event.publish`;
    if (topic === 'gw' || topic.startsWith('gw.'))
      return `${JSON.stringify(topic)} is in the gateway's own namespace (gw, gw.…)`;
    if (topic.startsWith('_') || topic.startsWith('$'))
      return `${JSON.stringify(topic)} is a name of the broker or its tools (names starting with _ or $)`;
    return undefined;
  }
}
