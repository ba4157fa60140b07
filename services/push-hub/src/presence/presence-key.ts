/**
 * What a connection is present in: for each subscription to a type, each of its constraint objects
 * (a room a client joined: `{"room": 42}`), or `{}` for a subscription without constraints. A
 * presence key is the type and that object's canonical JSON; two clients that asked for the same
 * room with keys in another order are in the same place.
 */
import { canonicalJson, type Subscription } from '../subscriptions/index.ts';

/** The constraint object of a subscription without constraints: present in the type as a whole. */
export const WHOLE_TYPE = '{}';

export interface PresencePlace {
  eventType: string;
  /** The canonical JSON of the constraint object. */
  where: string;
}

/** A JSON pair: a type may hold any character, so no separator could be told from it. */
export const placeKey = (p: PresencePlace) => JSON.stringify([p.eventType, p.where]);

export function placeOf(key: string): PresencePlace {
  const [eventType, where] = JSON.parse(key) as [string, string];
  return { eventType, where };
}

/** The places a subscription list is present in, among the types `wanted` accepts. */
export function placesOf(subs: readonly Subscription[], wanted: (type: string) => boolean): Set<string> {
  const keys = new Set<string>();
  for (const s of subs) {
    if (!wanted(s.eventType)) continue;
    if (s.oneOf.length === 0) keys.add(placeKey({ eventType: s.eventType, where: WHOLE_TYPE }));
    for (const clause of s.oneOf) {
      const where = canonicalJson(clause);
      if (where !== undefined) keys.add(placeKey({ eventType: s.eventType, where }));
    }
  }
  return keys;
}

/**
 * The places of a subscription list, made once per list: a query looks at every connection
 * subscribed to the type, and a connection keeps its list (a change replaces it).
 */
const placesOfList = new WeakMap<readonly Subscription[], Set<string>>();

/**
 * A test of whether a subscription list is present in `eventType`, in the place `where` when given
 * (its canonical JSON), or anywhere in the type when not; made once per query, run per connection.
 */
export function presenceTest(
  eventType: string,
  where: string | undefined,
): (subs: readonly Subscription[]) => boolean {
  if (where === undefined) return (subs) => subs.some((s) => s.eventType === eventType);
  const wanted = placeKey({ eventType, where });
  return (subs) => {
    let places = placesOfList.get(subs);
    if (!places) {
      places = placesOf(subs, () => true);
      placesOfList.set(subs, places);
    }
    return places.has(wanted);
  };
}
