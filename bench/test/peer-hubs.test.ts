import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CENTRIFUGO_SSE_PATH, centrifugoVersion, startCentrifugo } from '../src/baselines/centrifugo-hub.ts';
import { NCHAN_SUBSCRIBE_PATH, nchanVersion, startNchan } from '../src/baselines/nchan-hub.ts';
import { openRawConnection } from '../src/clients/raw-connection.ts';
import { benchEvent, stampNow } from '../src/push-hub/bench-event.ts';

interface Peer {
  publish(json: string): Promise<void>;
  rssBytes(): number;
  stop(): Promise<void>;
}

/** One SSE subscriber of the benchmark's client gets the stamp of one published event. */
async function deliversOneEvent(peer: Peer, port: number, path: string): Promise<void> {
  try {
    let opened!: () => void;
    const open = new Promise<void>((r) => (opened = r));
    let stamped!: (stamp: number) => void;
    const stamp = new Promise<number>((r) => (stamped = r));
    const socket = openRawConnection(
      0,
      { transport: 'sse', port, path },
      { onOpen: () => opened(), onClose: () => undefined, onStamp: (s) => stamped(s) },
    );
    await open;
    // The hub subscribes the connection as it answers; give it a moment before publishing.
    await new Promise((r) => setTimeout(r, 200));
    const sent = stampNow();
    await peer.publish(benchEvent('bench', 'all', sent));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise((r) => (timer = setTimeout(() => r('no delivery within 5 s'), 5000)));
    assert.equal(await Promise.race([stamp, late]), sent);
    clearTimeout(timer);
    assert.ok(peer.rssBytes() > 1 << 20);
    socket.destroy();
  } finally {
    await peer.stop();
  }
}

// The peers are installed by tools/bench-peers.sh (not on CI machines): their cases are skipped without them.
describe('peer hubs of the push-hub benchmark', () => {
  it('Nchan delivers a published event to an EventSource subscriber', {
    skip: !nchanVersion() && 'Nchan not installed (tools/bench-peers.sh)',
  }, async () => {
    const port = 28061;
    await deliversOneEvent(
      await startNchan({ port, cpu: 0, maxConnections: 100 }),
      port,
      NCHAN_SUBSCRIBE_PATH,
    );
  });

  it('Centrifugo delivers a published event to a uni_sse subscriber and forces a GC on request', {
    skip: !centrifugoVersion() && 'Centrifugo not built (tools/bench-peers.sh)',
  }, async () => {
    const port = 28062;
    const hub = await startCentrifugo({ port, cpu: 0 });
    assert.ok((await hub.gc()) > 0, 'HeapAlloc after a forced GC');
    await deliversOneEvent(hub, port, CENTRIFUGO_SSE_PATH);
  });
});
