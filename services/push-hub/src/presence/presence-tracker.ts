/**
 * Joins and leaves, announced to the clients that subscribe to `gw.presence.joined` and
 * `gw.presence.left`, for the event types of PRESENCE_EVENT_TYPES, cluster-wide and debounced.
 *
 * Every replica keeps two things:
 * - `local`: how many of its connections each member has in each place (presence-key.ts,
 *   presence-member.ts);
 * - `announced`: every member the cluster has announced as joined and not yet as left, with the
 *   replica that holds it. Each replica updates it from the announcements it receives, so each
 *   one tells its own subscribers of a change exactly when its view changes: a second join of a
 *   member already announced, or a leave of one not announced, is told to nobody.
 *
 * A member's first connection in a place joins it, unless the place already has it announced (its
 * other tab, or a reconnect from another replica). Its last connection leaving starts the leave
 * delay (PRESENCE_LEAVE_DELAY): a connection back on this replica within it cancels the leave; at
 * its end, the replicas are asked who holds the member live, and a reconnect to another replica
 * turns the leave into a move. So a reconnect is neither a leave nor a join.
 *
 * A replica that stops or dies announces nothing more. Every replica checks the replicas alive
 * (the registry of the control channel) every few seconds; for a holder that is gone, one replica
 * (the first to claim it in the store) asks who holds its members now and announces the others as
 * left: within the registry's TTL (15 s) plus one check after the replica is gone.
 *
 * Joins and leaves are sent in batches (a storm of reconnects is a few announcements, not one per
 * connection). The members announced are bounded (PRESENCE_MAX_MEMBERS): beyond it a new member
 * is present in queries but not announced, and counted.
 */
import type { Gathered } from '@gatehouse/bus';
import type { Logger } from '@gatehouse/service-kit';
import type { Subscription } from '../subscriptions/index.ts';
import { placeOf, placesOf } from './presence-key.ts';
import { type MemberSource, memberOf } from './presence-member.ts';
import {
  type AnnouncedReply,
  type Announcement,
  type LiveReply,
  type PresenceRequest,
  pmOf,
  splitPm,
} from './presence-messages.ts';

export interface PresenceChange {
  kind: 'joined' | 'left';
  eventType: string;
  /** The constraint object, canonical JSON. */
  where: string;
  member: string;
  user?: string | undefined;
}

export interface PresenceTrackerDeps {
  replica: string;
  /** Whether joins and leaves in places of this type are announced (PRESENCE_EVENT_TYPES). */
  announces: (type: string) => boolean;
  leaveDelayMs: number;
  /** PRESENCE_MAX_PLACES_PER_CONNECTION: a connection's places announced (its first ones). */
  maxPlacesPerConnection?: number;
  /** PRESENCE_MAX_MEMBERS: members announced at once, cluster-wide. */
  maxMembers: number;
  /** Asks the live replicas (those `ask` accepts; this one answers in-process). */
  gather(request: PresenceRequest, ask?: (replica: string) => boolean): Promise<Gathered>;
  liveReplicas(): Promise<string[]>;
  /** True for the one replica that takes over announcing a gone replica's leaves. */
  claimGone(replica: string): Promise<boolean>;
  /** Tells this replica's subscribers. */
  tell(change: PresenceChange): void;
  /** A member not announced, being beyond maxMembers. */
  overflowed(): void;
  /** A join or leave this replica announces (once in the cluster, bar two replicas racing): the lifecycle events' hook. */
  announcing?(change: PresenceChange): void;
  logger: Logger;
  /** How often gone replicas are looked for (default 5 s). */
  checkEveryMs?: number;
  /** How long joins and leaves wait to go out together (default 50 ms). */
  batchMs?: number;
}

interface Local {
  count: number;
  user: string | undefined;
  leaving?: NodeJS.Timeout | undefined;
}

interface Announced {
  holder: string;
  user: string | undefined;
}

/** At most this many place-members per message on the control bus. */
const chunk = 100;

export class PresenceTracker {
  private readonly deps: PresenceTrackerDeps;
  private readonly local = new Map<string, Local>();
  private readonly announced = new Map<string, Announced>();
  private readonly joins = new Set<string>();
  private readonly leaves = new Set<string>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private checkTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(deps: PresenceTrackerDeps) {
    this.deps = deps;
  }

  /** A connection's subscriptions changed: `before` empty for a new one, `after` empty for one gone. */
  changed(source: MemberSource, before: readonly Subscription[], after: readonly Subscription[]): void {
    if (this.stopped) return;
    // Most connections subscribe to no type with presence: their connect and close make no places.
    if (!this.announcesAny(before) && !this.announcesAny(after)) return;
    const was = this.announcedPlaces(before);
    const is = this.announcedPlaces(after);
    if (was.size === 0 && is.size === 0) return;
    const member = memberOf(source);
    for (const place of was) if (!is.has(place)) this.leaveLocal(pmOf(place, member));
    for (const place of is) if (!was.has(place)) this.joinLocal(pmOf(place, member), source.user);
  }

  private announcesAny(subs: readonly Subscription[]): boolean {
    for (const s of subs) if (this.deps.announces(s.eventType)) return true;
    return false;
  }

  /** A connection's places whose joins and leaves are announced: its first ones, up to the bound. */
  private announcedPlaces(subs: readonly Subscription[]): Set<string> {
    const places = placesOf(subs, this.deps.announces);
    const most = this.deps.maxPlacesPerConnection ?? Number.POSITIVE_INFINITY;
    return places.size <= most ? places : new Set([...places].slice(0, most));
  }

  /** Answers the presence channel's requests but queries (replica-presence.ts answers those). */
  answer(request: Exclude<PresenceRequest, { op: 'query' }>): LiveReply | AnnouncedReply | true {
    switch (request.op) {
      case 'live':
        return { live: request.pms.filter((pm) => (this.local.get(pm)?.count ?? 0) > 0) };
      case 'announce':
        for (const item of request.items) this.receive(item);
        return true;
      case 'announced':
        return { members: [...this.announced].map(([pm, a]) => [pm, a.holder, a.user]) };
    }
  }

  /** Learns what the cluster has announced, then looks for gone holders every few seconds. */
  async start(): Promise<void> {
    const { answers } = await this.deps.gather({ op: 'announced' }, (r) => r !== this.deps.replica);
    for (const reply of answers.values())
      for (const [pm, holder, user] of (reply as AnnouncedReply).members)
        if (!this.announced.has(pm)) this.announced.set(pm, { holder, user });
    this.checkTimer = setInterval(() => {
      this.lookForGone().catch((err) =>
        this.deps.logger.warn({ err }, 'presence: could not look for replicas gone'),
      );
    }, this.deps.checkEveryMs ?? 5000);
    this.checkTimer.unref();
  }

  /** Announces nothing more: the replicas left take over this one's members once it is gone. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.checkTimer);
    clearTimeout(this.flushTimer);
    for (const entry of this.local.values()) clearTimeout(entry.leaving);
  }

  /** Members announced now (for the gauge). */
  get size(): number {
    return this.announced.size;
  }

  private joinLocal(pm: string, user: string | undefined): void {
    const entry = this.local.get(pm);
    if (entry) {
      clearTimeout(entry.leaving);
      entry.leaving = undefined;
      entry.count++;
      return;
    }
    this.local.set(pm, { count: 1, user });
    this.leaves.delete(pm);
    this.joins.add(pm);
    this.scheduleFlush();
  }

  private leaveLocal(pm: string): void {
    const entry = this.local.get(pm);
    if (!entry || --entry.count > 0) return;
    entry.leaving = setTimeout(() => {
      if (this.local.get(pm) !== entry || entry.count > 0) return;
      this.local.delete(pm);
      this.joins.delete(pm);
      this.leaves.add(pm);
      this.scheduleFlush();
    }, this.deps.leaveDelayMs);
    entry.leaving.unref();
  }

  private scheduleFlush(): void {
    if (this.flushTimer || this.stopped) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flushing = this.flushing
        .then(() => this.flush())
        .catch((err) => this.deps.logger.warn({ err }, 'presence: joins or leaves not announced'));
    }, this.deps.batchMs ?? 50);
    this.flushTimer.unref();
  }

  private async flush(): Promise<void> {
    const me = this.deps.replica;
    const joins = [...this.joins].filter((pm) => !this.announced.has(pm) && this.local.has(pm));
    const leaves = [...this.leaves].filter((pm) => this.announced.has(pm) && !this.local.has(pm));
    this.joins.clear();
    this.leaves.clear();
    const items: Announcement[] = [];
    let room = this.deps.maxMembers - this.announced.size;
    for (const pm of joins) {
      if (room-- <= 0) {
        this.deps.overflowed();
        continue;
      }
      items.push({ pm, kind: 'joined', holder: me, user: this.local.get(pm)?.user });
    }
    items.push(...(await this.leavesOrMoves(leaves, me)));
    await this.announce(items);
  }

  /** Each member's leave, or its move to the replica that holds it live now. */
  private async leavesOrMoves(pms: string[], lastHolder: string): Promise<Announcement[]> {
    const items: Announcement[] = [];
    for (let i = 0; i < pms.length; i += chunk) {
      const part = pms.slice(i, i + chunk);
      const { answers } = await this.deps.gather({ op: 'live', pms: part });
      const holders = new Map<string, string>();
      for (const [replica, reply] of answers)
        for (const pm of (reply as LiveReply).live) holders.set(pm, replica);
      for (const pm of part) {
        const holder = holders.get(pm);
        const user = this.announced.get(pm)?.user;
        items.push(
          holder === undefined
            ? { pm, kind: 'left', holder: lastHolder, user }
            : { pm, kind: 'moved', holder, user },
        );
      }
    }
    return items;
  }

  private async announce(items: Announcement[]): Promise<void> {
    for (const item of items) if (item.kind !== 'moved') this.deps.announcing?.(changeOf(item));
    for (let i = 0; i < items.length; i += chunk)
      await this.deps.gather({ op: 'announce', items: items.slice(i, i + chunk) });
  }

  /** One announcement as this replica takes it: its view of who is present, told when it changes. */
  private receive(item: Announcement): void {
    const known = this.announced.get(item.pm);
    if (item.kind === 'left') {
      if (!known) return;
      this.announced.delete(item.pm);
    } else {
      this.announced.set(item.pm, { holder: item.holder, user: item.user });
      if (known || item.kind === 'moved') return;
    }
    this.deps.tell(changeOf(item));
  }

  private async lookForGone(): Promise<void> {
    if (this.stopped || this.announced.size === 0) return;
    const live = new Set([...(await this.deps.liveReplicas()), this.deps.replica]);
    const gone = new Set([...this.announced.values()].map((a) => a.holder).filter((r) => !live.has(r)));
    for (const replica of gone) {
      if (!(await this.deps.claimGone(replica))) continue;
      const pms = [...this.announced].filter(([, a]) => a.holder === replica).map(([pm]) => pm);
      this.deps.logger.info({ replica, members: pms.length }, 'presence: taking over a gone replica');
      await this.announce(await this.leavesOrMoves(pms, replica));
    }
  }
}

function changeOf(item: Announcement): PresenceChange {
  const { place, member } = splitPm(item.pm);
  return { kind: item.kind as 'joined' | 'left', ...placeOf(place), member, user: item.user };
}
