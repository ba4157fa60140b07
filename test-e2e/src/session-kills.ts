/**
 * Session kills during a fault, as an operator's tooling makes them: sessions that hold an open SSE
 * or WebSocket connection (a resuming client through the balancer, which reconnects with the same
 * JWT when its stream ends, as a browser would) are blacklisted through the blacklist service's
 * `POST /v3/session-blacklist`, retried while it answers 503 or cannot be reached. A kill is missed
 * when the session's connection is still open when it is checked (some seconds after the fault
 * healed, given longer while it is open), or when its token is still let in by a hub.
 */
import { signJwt } from '@gatehouse/auth';
import { type PickReplica, ResumingSseClient, ResumingWsClient, sleep, waitFor } from '@gatehouse/testkit';

export interface KillTarget {
  sessionId: string;
  jwt: string;
  client: ResumingSseClient | ResumingWsClient;
  /** When the blacklist service answered 201. */
  writtenAt: number | undefined;
  /** When the client's connection was first seen closed after the write. */
  closedAt: number | undefined;
}

export interface KillOutcome {
  kills: number;
  /** Sessions still open, or whose token a hub still lets in. */
  missed: number;
  /** ms from the blacklist service's 201 to the connection seen closed, the slowest. */
  slowestMs: number;
  /** Blacklist POSTs that were answered otherwise than 201 (or not at all), retried. */
  retries: number;
}

export class SessionKills {
  private readonly pick: PickReplica;
  private readonly jwtSecret: string;
  private readonly blacklistUrl: string;
  private retries = 0;

  constructor(options: { pick: PickReplica; jwtSecret: string; blacklistUrl: string }) {
    this.pick = options.pick;
    this.jwtSecret = options.jwtSecret;
    this.blacklistUrl = options.blacklistUrl;
  }

  /** Opens `count` sessions (SSE and WebSocket in turn), each with a connection that is open. */
  async open(count: number, prefix: string): Promise<KillTarget[]> {
    const targets = Array.from({ length: count }, (_, i) => {
      const sessionId = `${prefix}-${i}`;
      const jwt = signJwt(
        { jti: sessionId, username: 'someone', exp: Math.floor(Date.now() / 1000) + 3600 },
        { alg: 'HS256', key: this.jwtSecret },
      );
      const path = `/_gw/v1/connection/${i % 2 === 0 ? 'sse' : 'ws'}?jwt=${jwt}`;
      const client =
        i % 2 === 0 ? new ResumingSseClient(this.pick, path) : new ResumingWsClient(this.pick, path);
      client.start();
      return { sessionId, jwt, client, writtenAt: undefined, closedAt: undefined };
    });
    await waitFor(() => targets.every((t) => t.client.record.open), {
      timeoutMs: 15_000,
      what: 'every session to be connected',
    });
    return targets;
  }

  /**
   * Blacklists every target (at once), retrying each until the service answers 201, or until
   * `deadline()` (read on every try: a fault's end, and so the deadline, may not be known yet).
   */
  blacklist(targets: KillTarget[], deadline: () => number = () => Infinity): Promise<void> {
    return Promise.all(
      targets.map(async (t) => {
        while (Date.now() < deadline()) {
          const status = await this.post(t.sessionId);
          if (status === 201) {
            t.writtenAt = Date.now();
            void this.watchClose(t, deadline());
            return;
          }
          this.retries++;
          await sleep(250);
        }
      }),
    ).then(() => {});
  }

  /**
   * Stops the targets' clients and tells what was missed. A connection still open is given until
   * `closeBy` (a kill is owed, not timed: a loaded machine may take seconds to reconnect the store
   * watch and rescan; the slowest kill is reported).
   */
  async outcome(targets: KillTarget[], hubUrls: string[], closeBy = Date.now()): Promise<KillOutcome> {
    let missed = 0;
    for (const t of targets) {
      while (t.writtenAt !== undefined && t.client.record.open && Date.now() < closeBy) await sleep(50);
      const stillOpen = t.writtenAt === undefined || t.client.record.open;
      t.client.stop();
      if (stillOpen || (await this.letIn(t.jwt, hubUrls))) missed++;
    }
    const latencies = targets.filter((t) => t.closedAt !== undefined).map((t) => t.closedAt! - t.writtenAt!);
    const retries = this.retries;
    this.retries = 0;
    return { kills: targets.length, missed, slowestMs: Math.max(0, ...latencies), retries };
  }

  private async watchClose(t: KillTarget, deadline: number): Promise<void> {
    while (t.client.record.open && Date.now() < deadline) await sleep(20);
    if (!t.client.record.open) t.closedAt = Date.now();
  }

  private async post(sessionId: string): Promise<number> {
    try {
      const res = await fetch(`${this.blacklistUrl}/v3/session-blacklist`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId, validityInSeconds: 600 }),
        signal: AbortSignal.timeout(10_000),
      });
      await res.body?.cancel();
      return res.status;
    } catch {
      return 0;
    }
  }

  /**
   * Whether some hub does not refuse a new SSE connection with the token: it must answer 400 (a
   * blacklisted session's token is invalid). A 503, or no answer within 5 s (a hub starved of CPU
   * beside a CI run's other work), is asked again for 30 s; then it counts as not refused.
   */
  private async letIn(jwt: string, hubUrls: string[]): Promise<boolean> {
    for (const hub of hubUrls) {
      const deadline = Date.now() + 30_000;
      let status = 0;
      while (Date.now() < deadline) {
        status = await fetch(`${hub}/_gw/v1/connection/sse?jwt=${jwt}`, {
          signal: AbortSignal.timeout(5000),
        }).then(
          async (res) => {
            await res.body?.cancel();
            return res.status;
          },
          () => 0,
        );
        if (status !== 503 && status !== 0) break;
        await sleep(250);
      }
      if (status !== 400) return true;
    }
    return false;
  }
}
