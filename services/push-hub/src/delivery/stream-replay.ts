/**
 * Serves resumes from positions older than the ring by replaying the fan-out stream from the
 * broker (`subscribe({ from })`), until the replay reaches events the ring holds or the live
 * subscription will dispatch; then each target is handed the ring's events after its position and
 * goes on live. Nothing is missed and nothing comes twice: the hand-over happens in one synchronous
 * step, while no live event can be dispatched in between.
 *
 * Bounded work: resumes share replay readers instead of opening one broker subscription each. A
 * reader ("round") starts at the oldest position waiting and serves every target whose position is
 * at or after where the reader currently is; a target further back waits for the next round. At
 * most `maxReaders` rounds run at once per replica, so a thousand clients coming back after a
 * rolling deploy cost at most that many broker subscriptions, not a thousand.
 *
 * Backpressure: after each message a round waits until every target that says it is full (`ready`)
 * has drained, so a replay goes at the pace of its readers and never piles up output. A target
 * still full after `stallMs` is detached: the round reads on for the others, and the target asks
 * for a replay from its own place again once it has drained.
 */
import {
  type Bus,
  type Message,
  type Position,
  PositionUnavailableError,
  type Subscription,
} from '@gatehouse/bus';
import { type EventRing, eventIdentity, type RingEvent } from './event-ring.ts';
import { readEventHeaders, readStreamEvent, type UnreadableReason } from './stream-event.ts';
import { UnreadEvent } from './unread-event.ts';

export interface ReplayTarget {
  /** The target has everything up to this position; it gets the events after it. */
  readonly from: Position;
  /** False once the target is gone (connection closed): it is dropped. */
  readonly wanted: boolean;
  /**
   * Whether the ring has (or will have) every event the target wants after `position` (interest
   * routing); absent: whenever the stream is covered. The target is handed over only then.
   */
  covers?(position: Position): boolean;
  /**
   * The event types it wants, when it wants only some (a long poll): it is offered only events of
   * those, and `StreamReplay.readTo` says how far the reader went past the others. Absent: every
   * event is offered.
   */
  readonly types?: ReadonlySet<string>;
  /** One replayed event after `from`, in stream order, filtered by `types` only; false: send nothing more. */
  event(e: RingEvent): boolean | undefined;
  /** A promise when the target cannot take more yet: the round waits for it (at most `stallMs`). */
  ready?(): Promise<void> | undefined;
  /** The round stopped waiting for it and read on: it is no longer served by the round. */
  detach?(): void;
  /**
   * The replay has reached the ring: `rest` are the ring's events after `at` (the replay's
   * position, or the target's own when that is later), and every later event is dispatched live.
   * With `beyondRing`, `at` is past the ring's newest event: live events up to `at` are already
   * delivered and must be dropped.
   */
  caughtUp(at: Position, rest: RingEvent[], beyondRing: boolean): void;
  /** The broker cannot replay from `from`: expired or unknown. */
  unavailable(err: PositionUnavailableError): void;
  /** The broker could not be read (down, time-out): the target should try again later. */
  failed(err: Error): void;
}

export interface ReplayMetrics {
  /** `opened`: a reader was added (else one closed). */
  readersChanged(open: number, opened: boolean): void;
  replayed(events: number): void;
}

export interface StreamReplayOptions {
  bus: Bus;
  topic: string;
  ring: EventRing;
  /** Where the live fan-out subscription started (its `liveAfter`), once it runs. */
  liveAfter(): Position | undefined;
  maxReaders: number;
  /** How long a round waits for a full target before it reads on without it (default 2 s). */
  stallMs?: number;
  metrics: ReplayMetrics;
  onError(err: Error): void;
}

export class StreamReplay {
  private readonly options: StreamReplayOptions;
  private readonly rounds = new Set<ReplayRound>();
  private waiting: ReplayTarget[] = [];
  private closed = false;

  constructor(options: StreamReplayOptions) {
    this.options = options;
  }

  /** Orders two positions of the fan-out stream; throws for a malformed one. */
  readonly compare = (a: Position, b: Position): number => this.options.bus.comparePositions(a, b);

  /** The epoch a position of the fan-out stream carries, if any (Bus.positionEpoch); throws for a malformed one. */
  epochOf(position: Position): string | undefined {
    return this.options.bus.positionEpoch?.(position);
  }

  /** Whether two positions carry different epochs (both carry one): they share no history. */
  otherEpochs(a: Position, b: Position): boolean {
    const x = this.epochOf(a);
    const y = this.epochOf(b);
    return x !== undefined && y !== undefined && x !== y;
  }

  private malformed(position: Position): PositionUnavailableError | undefined {
    try {
      this.compare(position, position);
      return undefined;
    } catch (err) {
      if (err instanceof PositionUnavailableError) return err;
      return new PositionUnavailableError(position, 'unknown', (err as Error).message);
    }
  }

  get readers(): number {
    return this.rounds.size;
  }

  request(target: ReplayTarget): void {
    if (this.closed) {
      target.failed(new Error('the hub is stopping'));
      return;
    }
    // A position the bus cannot parse (a client's cookie or header) is unknown. A round must never
    // start from one: ordering it would throw inside the round, outside any request.
    const malformed = this.malformed(target.from);
    if (malformed) {
      target.unavailable(malformed);
      return;
    }
    for (const round of this.rounds) if (round.join(target)) return;
    this.waiting.push(target);
    this.startRounds();
  }

  /** How far the reader serving the target has read (it was offered every event it wants up to there). */
  readTo(target: ReplayTarget): Position | undefined {
    for (const round of this.rounds) {
      const at = round.readTo(target);
      if (at !== undefined) return at;
    }
    return undefined;
  }

  /** The target no longer wants events (its connection closed). */
  cancel(target: ReplayTarget): void {
    this.waiting = this.waiting.filter((t) => t !== target);
    for (const round of this.rounds) round.leave(target);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiting = [];
    await Promise.all([...this.rounds].map((r) => r.stop()));
  }

  /** Whether every event after `position` is in the ring or will be dispatched live. */
  covered(position: Position): boolean {
    const { ring } = this.options;
    const oldest = ring.oldest;
    if (oldest !== undefined) return this.compare(oldest, position) <= 0;
    const live = this.options.liveAfter();
    return live !== undefined && this.compare(position, live) >= 0;
  }

  /** Whether this replica has the stream up to `position` (in its ring, or before it went live). */
  reached(position: Position): boolean {
    const newest = this.options.ring.head ?? this.options.liveAfter();
    return newest !== undefined && this.compare(newest, position) >= 0;
  }

  /** The ring's events after a covered position, and whether it lies beyond the ring's newest. */
  ringAfter(position: Position): { rest: RingEvent[]; beyondRing: boolean } {
    const { ring } = this.options;
    const held = ring.after(position);
    if (held) return { rest: held, beyondRing: false };
    const head = ring.head;
    if (head === undefined || this.compare(position, head) > 0) return { rest: [], beyondRing: true };
    return { rest: ring.since(position, this.compare), beyondRing: false };
  }

  private startRounds(): void {
    this.waiting = this.waiting.filter((t) => t.wanted);
    if (this.closed || this.waiting.length === 0 || this.rounds.size >= this.options.maxReaders) return;
    // One epoch per round: the offsets of another say nothing about its own.
    const first = this.waiting[0]!.from;
    const taken = this.waiting.filter((t) => !this.otherEpochs(t.from, first));
    const round = new ReplayRound(this, this.options, taken);
    this.waiting = this.waiting.filter((t) => this.otherEpochs(t.from, first));
    this.rounds.add(round);
    this.options.metrics.readersChanged(this.rounds.size, true);
    void round.run().finally(() => {
      this.rounds.delete(round);
      this.options.metrics.readersChanged(this.rounds.size, false);
      this.startRounds();
    });
  }
}

/** One broker subscription serving the targets at or after its position. */
class ReplayRound {
  private readonly replay: StreamReplay;
  private readonly options: StreamReplayOptions;
  private readonly targets: Set<ReplayTarget>;
  /** The position of the last message read (the start before the first). */
  private at: Position;
  private done = false;
  /** CloudEvent identities replayed by this round: a second one is a duplicate, sent to nobody. */
  private readonly replayed = new Set<string>();
  /** Targets the round waits for (full), each released when it drains or leaves. */
  private readonly released = new Map<ReplayTarget, PromiseWithResolvers<void>>();
  private readonly finished = Promise.withResolvers<void>();
  private subscription: Subscription | undefined;
  /**
   * Targets whose position the reader has not passed yet, oldest position first. Once it has, every
   * later message is after it: only the oldest is compared with each message, not every target (a
   * comparison parses both positions, and a round may serve hundreds of long polls).
   */
  private readonly notStarted = new Set<ReplayTarget>();
  private readonly startOrder: ReplayTarget[] = [];
  /**
   * The targets by the types they want (`types`), and those that want every event: a message is
   * offered to its type's targets and to those, not to every target (a round may serve hundreds
   * of long polls, each wanting a few of many types).
   */
  private readonly byType = new Map<string, Set<ReplayTarget>>();
  private readonly everyType = new Set<ReplayTarget>();
  /** The targets that may ask the round to wait (`ready`). */
  private readonly pacing = new Set<ReplayTarget>();

  constructor(replay: StreamReplay, options: StreamReplayOptions, targets: ReplayTarget[]) {
    this.replay = replay;
    this.options = options;
    this.targets = new Set();
    for (const t of targets) this.add(t);
    this.at = this.oldestFrom();
  }

  /** Takes a target whose position the reader has not passed yet. */
  join(target: ReplayTarget): boolean {
    // Offsets of another epoch say nothing about this round's: it waits for a round of its own.
    if (this.done || this.replay.otherEpochs(target.from, this.at)) return false;
    if (this.replay.compare(target.from, this.at) < 0) return false;
    this.add(target);
    return true;
  }

  private add(t: ReplayTarget): void {
    this.targets.add(t);
    this.awaitStart(t);
    if (t.ready) this.pacing.add(t);
    if (!t.types) {
      this.everyType.add(t);
      return;
    }
    for (const type of t.types) {
      let set = this.byType.get(type);
      if (!set) {
        set = new Set();
        this.byType.set(type, set);
      }
      set.add(t);
    }
  }

  /** Whether it was a target of the round. */
  private drop(t: ReplayTarget): boolean {
    if (!this.targets.delete(t)) return false;
    this.pacing.delete(t);
    this.everyType.delete(t);
    for (const type of t.types ?? []) {
      const set = this.byType.get(type);
      set?.delete(t);
      if (set?.size === 0) this.byType.delete(type);
    }
    return true;
  }

  /** The position of the last message read, once the reader has passed the target's own. */
  readTo(target: ReplayTarget): Position | undefined {
    return this.targets.has(target) && !this.notStarted.has(target) ? this.at : undefined;
  }

  /** Files the target among those whose position is still ahead, in position order. */
  private awaitStart(target: ReplayTarget): void {
    const { compare } = this.replay;
    let lo = 0;
    let hi = this.startOrder.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(this.startOrder[mid]!.from, target.from) <= 0) lo = mid + 1;
      else hi = mid;
    }
    this.startOrder.splice(lo, 0, target);
    this.notStarted.add(target);
  }

  /** The targets whose position `position` is past start taking messages. */
  private startPassed(position: Position): void {
    const { compare } = this.replay;
    let passed = 0;
    while (passed < this.startOrder.length) {
      const t = this.startOrder[passed]!;
      if (this.targets.has(t) && compare(position, t.from) <= 0) break;
      this.notStarted.delete(t);
      passed++;
    }
    if (passed > 0) this.startOrder.splice(0, passed);
  }

  leave(target: ReplayTarget): void {
    // A round waiting for it to drain need not wait any more.
    this.released.get(target)?.resolve();
    if (this.drop(target) && this.targets.size === 0) this.finish();
  }

  async stop(): Promise<void> {
    this.finish();
    await this.subscription?.close();
  }

  async run(): Promise<void> {
    const subscription = await this.subscribe();
    if (!subscription) return;
    this.subscription = subscription;
    // The start itself may be covered already (a replica behind the client, a ring warmed meanwhile).
    if (!this.done) this.catchUp(this.at);
    await this.finished.promise;
    await subscription.close();
  }

  /** Subscribes from the oldest target; targets the broker cannot serve from are told so. */
  private async subscribe(): Promise<Subscription | undefined> {
    const { bus, topic, onError } = this.options;
    while (!this.done && this.targets.size > 0) {
      try {
        return await bus.subscribe(topic, (m) => this.handle(m), { from: this.at, onError });
      } catch (err) {
        if (!(err instanceof PositionUnavailableError)) {
          for (const t of this.takeTargets()) t.failed(err as Error);
          break;
        }
        // Expired: so is every target at that position; the later ones may still be held. Of
        // another epoch: so is every target of that epoch (the others were never in this round).
        for (const t of [...this.targets]) {
          const refused =
            err.reason === 'epoch'
              ? !this.replay.otherEpochs(t.from, this.at)
              : this.replay.compare(t.from, this.at) <= 0;
          if (!refused) continue;
          this.drop(t);
          t.unavailable(err);
        }
        if (this.targets.size > 0) this.at = this.oldestFrom();
      }
    }
    this.finish();
    return undefined;
  }

  private handle(message: Message): void | Promise<void> {
    if (this.done) return;
    const e = replayedEvent(message);
    this.at = message.position;
    const deliverable = typeof e !== 'string' && this.firstTime(e);
    if (this.startOrder.length > 0) this.startPassed(message.position);
    if (deliverable) {
      const typed = this.byType.get(e.type);
      const sent = (typed ? this.offer(typed, e) : 0) + this.offer(this.everyType, e);
      if (sent) this.options.metrics.replayed(sent);
    }
    this.catchUp(message.position);
    return this.untilReady();
  }

  /** Offers the event to the started targets of `set`; how many took it. */
  private offer(set: Set<ReplayTarget>, e: RingEvent): number {
    let sent = 0;
    // A Set may lose its current entry while it is iterated: no copy per message.
    for (const t of set) {
      if (!t.wanted) this.drop(t);
      else if (!this.notStarted.has(t)) {
        sent++;
        if (t.event(e) === false) this.drop(t);
      }
    }
    return sent;
  }

  /** Resolves once every target can take more; the ones still full after the stall are detached. */
  private untilReady(): Promise<void> | undefined {
    const full: ReplayTarget[] = [];
    for (const t of this.pacing) {
      const ready = t.ready?.();
      if (!ready) continue;
      const released = Promise.withResolvers<void>();
      void ready.then(released.resolve);
      this.released.set(t, released);
      full.push(t);
    }
    return full.length === 0 ? undefined : this.waitForDrain(full);
  }

  private async waitForDrain(full: ReplayTarget[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const stall = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.stallMs ?? 2000);
    });
    const drained = new Set<ReplayTarget>();
    const each = full.map((t) => this.released.get(t)!.promise.then(() => void drained.add(t)));
    await Promise.race([Promise.all(each), stall]);
    clearTimeout(timer);
    for (const t of full) {
      this.released.delete(t);
      if (!drained.has(t) && this.drop(t)) t.detach?.();
    }
    if (this.targets.size === 0) this.finish();
  }

  /**
   * False for an event with the source and id of one this round replayed before: every target has
   * that one already (from this round, or before its own position), as live delivery drops it too.
   */
  private firstTime(e: RingEvent): boolean {
    const identity = eventIdentity(e);
    if (identity === undefined) return true;
    if (this.replayed.has(identity)) return false;
    this.replayed.add(identity);
    return true;
  }

  /** Hands every target over to the ring and live delivery once `position` is covered. */
  private catchUp(position: Position): void {
    if (this.targets.size > 0 && this.replay.covered(position)) {
      for (const t of [...this.targets]) {
        const at = this.replay.compare(t.from, position) > 0 ? t.from : position;
        // A type it wants that this replica reads only since later: the round reads on for it.
        if (t.wanted && t.covers?.(at) === false) continue;
        this.drop(t);
        if (!t.wanted) continue;
        const { rest, beyondRing } = this.replay.ringAfter(at);
        t.caughtUp(at, rest, beyondRing);
      }
    }
    if (this.targets.size === 0) this.finish();
  }

  private takeTargets(): ReplayTarget[] {
    const all = [...this.targets];
    for (const t of all) this.drop(t);
    return all;
  }

  private oldestFrom(): Position {
    let oldest: Position | undefined;
    for (const t of this.targets)
      if (oldest === undefined || this.replay.compare(t.from, oldest) < 0) oldest = t.from;
    return oldest!;
  }

  private finish(): void {
    this.done = true;
    this.finished.resolve();
  }
}

/**
 * A replayed record as an event: kept unread when its headers name its type, source and id, as
 * the live stream keeps one nobody wants (unread-event.ts), so a target that skips the type (a long
 * poll reading past the events it does not want) never parses its body; read at once otherwise.
 */
function replayedEvent(message: Message): RingEvent | UnreadableReason {
  const headers = readEventHeaders(message.headers);
  if (headers) return new UnreadEvent(message.position, message.value, headers);
  return readStreamEvent(message.position, message.value.toString('utf8'));
}
