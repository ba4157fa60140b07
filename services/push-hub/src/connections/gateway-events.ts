/**
 * Events the hub itself sends to a connection: the welcome pair `gw.connection.create` (with the
 * connection token, and the connect hook's `data`) and `gw.subscriptions_set` (the effective subscriptions), `gw.session_killed`
 * before a blacklisted session's connection closes, `gw.session_expired` before a connection ends
 * with the JWT it was admitted with, `gw.connection_closed` before an operator ends one through the
 * connections API, `gw.presence.joined` and `gw.presence.left` to those that subscribe to them
 * (presence/presence-tracker.ts), and `gw.resync_required` when a client resumes
 * from a position the hub can no longer serve. CloudEvents 0.2, as the spec asks for events the
 * gateway creates.
 */
import { GATEWAY_EVENT_SOURCE } from '@gatehouse/cloudevents';
import { randomUuids } from '@gatehouse/service-kit';
import type { Subscription } from '../subscriptions/index.ts';
import { type ResyncReason, resyncAdvice } from './resync-reason.ts';

export interface OutgoingEvent {
  type: string;
  json: string;
  /**
   * Stream position: an event's own for events from the fan-out stream; for the hub's own events
   * the position the connection is at (hub.ts), so a client resuming from one continues there.
   */
  position: string | undefined;
  /**
   * Set on the hub's own events only. Each transport turns it into a mark no producer can write
   * (SSE: an `origin: gateway` field line; WebSocket with positions: `gwcontrol` in place of
   * `gwposition`; long-polling: first in the answer, counted by `gateway_events`), so a client
   * tells them apart by the frame, never by the type or source an event names.
   */
  own?: true;
}

/**
 * The event's JSON written out field by field (the same text JSON.stringify makes of the object
 * {specversion, id, type, source, time, data}): a new connection gets two of these, and building
 * the object to serialize it cost more than the text itself. Types are our own constants; the
 * data goes through JSON.stringify.
 */
function gatewayEvent(type: string, data: unknown, position?: string): OutgoingEvent {
  return gatewayEventOfJson(type, data === undefined ? undefined : JSON.stringify(data), position);
}

/** The same, with the data as JSON text already (undefined: none). */
function gatewayEventOfJson(type: string, dataJson: string | undefined, position?: string): OutgoingEvent {
  const head = `{"specversion":"0.2","id":"${newEventId()}","type":${quotedType(type)},"source":"${GATEWAY_EVENT_SOURCE}","time":"${isoNow()}"`;
  const json = dataJson === undefined ? `${head}}` : `${head},"data":${dataJson}}`;
  return { type, json, position, own: true };
}

/** Random UUIDs, as `randomUUID()` makes them, without its garbage (two per connect). */
const newEventId = randomUuids();

/** The types are the hub's own, a handful: each is written as a JSON string once. */
const quotedTypes = new Map<string, string>();

function quotedType(type: string): string {
  let quoted = quotedTypes.get(type);
  if (quoted === undefined) {
    quoted = JSON.stringify(type);
    quotedTypes.set(type, quoted);
  }
  return quoted;
}

let isoMs = Number.NaN;
let isoText = '';
let isoSecond = Number.NaN;
/** `2026-11-29T16:05:07.`: the text of the second `isoSecond`, up to its milliseconds. */
let isoSecondText = '';

/**
 * The time of an event made now, as `Date.prototype.toISOString` writes it, made once per
 * millisecond: a new connection's welcome pair (and the connects of a reconnect storm, several a
 * millisecond) share it. Within a second only the milliseconds change: a Date and its formatting
 * are made once a second, and the milliseconds are looked up (a reconnect storm has about one
 * connect a millisecond, so a Date each was still one per connect).
 */
export function isoNow(now = Date.now()): string {
  if (now !== isoMs) {
    isoMs = now;
    const ms = ((now % 1000) + 1000) % 1000;
    const second = now - ms;
    if (second !== isoSecond) {
      isoSecond = second;
      isoSecondText = new Date(second).toISOString().slice(0, -4);
    }
    isoText = `${isoSecondText}${threeDigits[ms]}Z`;
  }
  return isoText;
}

const threeDigits = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * The welcome event; `data` is what the connect hook gave the connection (CONNECT_CHECK), when any.
 * The welcome pair is made at the position it is sent at (hub.ts), so it is not copied to add it.
 */
export const connectionCreated = (token: string, data?: unknown, position?: string, ack?: unknown) =>
  data === undefined && ack === undefined && base64url.test(token)
    ? gatewayEventOfJson('gw.connection.create', `{"connection_token":"${token}"}`, position)
    : gatewayEvent(
        'gw.connection.create',
        {
          connection_token: token,
          ...(data !== undefined && { data }),
          ...(ack !== undefined && { ack }),
        },
        position,
      );

/** A token as the hub issues it needs no JSON escaping: written as it is, without JSON.stringify. */
const base64url = /^[A-Za-z0-9_-]*$/;

export const subscriptionsSet = (subs: Subscription[], position?: string) =>
  gatewayEventOfJson('gw.subscriptions_set', subscriptionsJson(subs), position);

/** The JSON of each shared list (frozen, shared-subscription-lists.ts), made once for its holders. */
const sharedListJson = new WeakMap<readonly Subscription[], string>();

function subscriptionsJson(subs: Subscription[]): string {
  if (!Object.isFrozen(subs)) return JSON.stringify(subs);
  let json = sharedListJson.get(subs);
  if (json === undefined) {
    json = JSON.stringify(subs);
    sharedListJson.set(subs, json);
  }
  return json;
}

/**
 * `gw.subscriptions_set` without its list: what a long-poll queue keeps for a change, since the
 * connection's record holds the list (transports/longpoll-records.ts adds it when it is sent).
 */
export const subscriptionsChanged = () => gatewayEvent('gw.subscriptions_set', undefined);

export const sessionKilled = (sessionId: string) =>
  gatewayEvent('gw.session_killed', { session_id: sessionId });

export const sessionExpired = (expiredAt: number) =>
  gatewayEvent('gw.session_expired', {
    expired_at: new Date(expiredAt).toISOString(),
    reason:
      "the JWT this connection was admitted with (or the connect hook's expireAt) has expired; reconnect, with a fresh JWT if it has expired",
  });

/**
 * The last event of a connection an operator ended through the connections API: why, and whether
 * the client should come back (`reconnect: true`: reconnect, to any replica, and resume).
 */
export const connectionClosed = (reason: string, reconnect: boolean) =>
  gatewayEvent('gw.connection_closed', { reason, reconnect });

/**
 * The client's position cannot be resumed from: `reason` says why (resync-reason.ts: a code), and
 * `detail` what to do, in words.
 */
export const resyncRequired = (lastEventId: string, reason: ResyncReason = 'retention-gap') =>
  gatewayEvent('gw.resync_required', {
    last_event_id: lastEventId,
    reason,
    detail: resyncAdvice[reason],
  });

/** What a presence event tells: a member joined or left a place (presence/presence-tracker.ts). */
export interface PresenceEventData {
  eventType: string;
  /** The constraint object of the place; `{}` for the type as a whole. */
  where: Record<string, unknown>;
  /** The member's id as other clients see it (presence/presence-member.ts). */
  member: string;
  user?: string;
}

export const presenceChanged = (kind: 'joined' | 'left', data: PresenceEventData) =>
  gatewayEvent(`gw.presence.${kind}`, data);
