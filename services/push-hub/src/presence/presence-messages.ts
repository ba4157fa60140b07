/**
 * What hub replicas say to each other about presence, on their own control channel
 * (`gw.presence.<replica>`): a query of who is present somewhere, which of some members are
 * present live, an announcement of joins and leaves (each replica then tells its own subscribers),
 * and the announced members, for a replica that starts.
 *
 * A place-member (`pm`) is a place key (presence-key.ts) and a member (presence-member.ts), joined.
 */
export type PresenceRequest =
  | { op: 'query'; eventType: string; where?: string; limit: number }
  | { op: 'live'; pms: string[] }
  | { op: 'announce'; items: Announcement[] }
  | { op: 'announced' };

export interface Announcement {
  pm: string;
  /** joined and left go to clients; moved only says which replica holds the member now. */
  kind: 'joined' | 'left' | 'moved';
  /** The replica that holds the member (for a leave: held it last). */
  holder: string;
  user?: string | undefined;
}

/** One connection present in a place, as the internal API shows it. */
export interface PresentConnection {
  connection: string;
  transport: string;
  replica: string;
  user?: string;
  session?: string;
  /** When it connected. */
  since: string;
}

export interface QueryReply {
  /** Its SSE, WebSocket and socket.io connections present there, all of them. */
  count: number;
  /**
   * The ids of its long-poll connections present there, all of them: two replicas may both have
   * served one lately, and the merge counts it once.
   */
  longpoll: string[];
  /** At most the query's limit of them. */
  connections: PresentConnection[];
}

export interface LiveReply {
  live: string[];
}

export interface AnnouncedReply {
  /** [pm, holder, user?] */
  members: Array<[string, string, string | undefined]>;
}

/** A JSON pair, as place keys are: a session id may hold any character. */
export const pmOf = (place: string, member: string) => JSON.stringify([place, member]);
export function splitPm(pm: string): { place: string; member: string } {
  const [place, member] = JSON.parse(pm) as [string, string];
  return { place, member };
}
