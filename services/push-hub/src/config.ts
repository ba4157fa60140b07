/** The push hub's settings (environment variables; defaults documented in the README). */
import { accessCheckField } from '@gatehouse/auth';
import {
  bool,
  corsConfig,
  duration,
  int,
  list,
  optionalStr,
  str,
  oneOf,
  trustedProxiesConfig,
} from '@gatehouse/service-kit';
import { busKinds } from '@gatehouse/bus';
import { typesClaimField } from './subscriptions/index.ts';

export const pushHubConfig = {
  ...corsConfig,
  EXTRACTORS: optionalStr('extractor configuration: a JSON text or a file path (subscription fields)'),
  SUBSCRIPTION_CHECK: accessCheckField(
    'who may subscribe: no_check, jwt_validation, or the URL of a check service',
  ),
  SUBSCRIPTION_CHECK_TIMEOUT: duration(
    'time-out of an external subscription check (denies on time-out)',
    '5s',
    { min: '100ms' },
  ),
  ...connectCheckConfig(),
  MAX_SUBSCRIPTIONS_PER_CONNECTION: int(
    'subscriptions one connection may hold, JWT-inferred and manual together, duplicates removed (400 beyond, at connect and on PUT)',
    128,
    { min: 1 },
  ),
  MAX_PATTERNS_PER_CONNECTION: int(
    'of those, type patterns (`com.example.orders.*`, `com.example.orders.>`) one connection may hold (400 beyond)',
    16,
    { min: 0 },
  ),
  MAX_PATTERN_SEGMENTS: int(
    'segments (split on `.`) a type pattern may have (400 beyond); an event costs at most 2^(segments+1) trie nodes to match',
    16,
    { min: 1, max: 64 },
  ),
  MAX_TYPE_PATTERNS: int(
    'distinct type patterns one replica holds, every connection and waiting long poll together (a connect or change adding one beyond is refused 503 with Retry-After)',
    10_000,
    { min: 0 },
  ),
  MAX_TYPE_PATTERNS_PER_ADDRESS: int(
    'of those, distinct type patterns the connections of one client address may hold on a replica, so one address cannot take them all (429 with Retry-After beyond); IPv6 per /64',
    1000,
    { min: 0 },
  ),
  SUBSCRIPTION_CHECK_PATTERNS: bool(
    'with SUBSCRIPTION_CHECK a URL: the check service judges type patterns (what `>` or `com.example.*` reach), so clients may name them; off: a list naming a pattern is refused 400 before the service is asked',
    false,
  ),
  SUBSCRIPTION_TYPES_CLAIM: typesClaimField(
    'JSON pointer to the JWT claim naming the event types and type patterns a token may subscribe to (a string or a list); needs SUBSCRIPTION_CHECK=jwt_validation; unset: any type',
  ),
  WS_MAX_PAYLOAD_BYTES: int(
    'largest WebSocket message a client may send, fragments together (the hub takes none: close 1003; beyond this, 1009 before it is read whole)',
    64 * 1024,
    { min: 1024 },
  ),
  SOCKETIO_MAX_PACKET_BYTES: int(
    'largest socket.io packet or polling body a client may send (its connect with the subscription list; beyond, the session is closed or the POST answered 413)',
    256 * 1024,
    { min: 1024 },
  ),
  MAX_SUBSCRIPTIONS_BYTES: int(
    "bytes one connection's subscription list may take as JSON, as the hub stores and sends it (400 beyond); at most the PUT body limit, 256 KiB",
    32 * 1024,
    { min: 1024, max: 256 * 1024 },
  ),
  SHARED_SUBSCRIPTION_LISTS: int(
    'manual subscription lists a replica keeps by their text once checked, shared by every connection sending that text (the oldest leaves first; 0: none kept, every connect parses and checks its own)',
    1000,
    { min: 0, max: 100_000 },
  ),
  // At most 16,383: V8 hashes a longer string by its length alone (shared-subscription-lists.ts).
  SHARED_SUBSCRIPTION_LIST_BYTES: int(
    'the longest subscription-list text (UTF-8 bytes) SHARED_SUBSCRIPTION_LISTS keeps; a longer one is checked on every connect',
    1024,
    { min: 0, max: 16_383 },
  ),
  MAX_SUBSCRIPTION_CHANGES_PER_MINUTE: int(
    'subscription changes (PUT …/subscriptions) per connection per minute, all replicas together (429 with Retry-After beyond)',
    60,
    { min: 1 },
  ),
  MAX_CONNECTIONS_PER_MINUTE: int(
    'new SSE, WebSocket, socket.io and long-polling connections per minute, all replicas together',
    5000,
    { min: 1 },
  ),
  MAX_CONNECTIONS_PER_IP_PER_MINUTE: int(
    'connect attempts one client address may make per minute on each replica, every transport together (socket.io handshakes too); IPv6 per /64',
    1000,
    { min: 1 },
  ),
  MAX_CONNECTIONS_PER_ADDRESS: int(
    'connections one client address may hold at once on each replica, every transport together (a socket.io or long-poll session counts while it lives); IPv6 per /64; 429 with Retry-After beyond',
    1000,
    { min: 1 },
  ),
  MAX_CONNECTIONS: int(
    'connections a replica holds at once, every transport together; keep it below the open-files limit; 503 with Retry-After beyond',
    20_000,
    { min: 1 },
  ),
  // Their X-Forwarded-For names the client for the per-address budget.
  ...trustedProxiesConfig,
  MAX_RECONNECTS_PER_MINUTE: int(
    'reconnects (a valid connection token or a resume position the stream could hold) per minute, all replicas together, counted apart from new connections',
    50_000,
    { min: 1 },
  ),
  CONNECTION_TOKEN_TTL: duration(
    'how long a connection token is accepted (a long-poll cookie also ends with its session JWT)',
    '24h',
    { min: '1s' },
  ),
  DRAIN_SPREAD_PERCENT: int(
    'share of SHUTDOWN_DRAIN_TIMEOUT_MS over which a stopping hub closes its connections in batches (0: all at once)',
    50,
    { min: 0, max: 90 },
  ),
  DRAIN_RECONNECT_JITTER: duration(
    'SSE clients of a stopping hub are told to reconnect after a random delay up to this (retry:; 0: at once)',
    '500ms',
    { min: '0ms', max: '1m' },
  ),
  HEARTBEAT_INTERVAL: duration('SSE heartbeat comment and WebSocket ping interval', '15s', { min: '100ms' }),
  EVENT_BUFFER_SIZE: int(
    'recent events kept per replica for Last-Event-ID resume and long-poll cursors',
    10_000,
    { min: 1 },
  ),
  EVENT_BUFFER_MAX_BYTES: int(
    'estimated bytes the recent events kept per replica may take (twice their JSON length + 200 each); the oldest go first',
    64 * 1024 * 1024,
    { min: 64 * 1024 },
  ),
  EVENT_BUFFER_WARMUP: bool(
    'fill the event buffer from the fan-out stream at start (its newest EVENT_BUFFER_SIZE events), so resumes after a restart are served from memory',
    true,
  ),
  RESUME_REPLAY_READERS: int(
    'broker subscriptions a replica opens at most at once to replay the fan-out stream for resumes older than its buffer',
    2,
    { min: 1 },
  ),
  LONGPOLL_TIMEOUT: duration('how long a long-poll request waits for events before answering empty', '5s', {
    min: '100ms',
    max: '5m',
  }),
  // Short: a session a client left costs its memory and its connection place until then. The hub
  // raises it to twice LONGPOLL_TIMEOUT, so a poll in flight never outlives its session.
  LONGPOLL_SESSION_TTL: duration(
    'a long-poll connection not polled for this long is forgotten (at least twice LONGPOLL_TIMEOUT)',
    '60s',
    { min: '1s' },
  ),
  LONGPOLL_QUEUE_SIZE: int(
    'private events (welcome, subscription changes) kept per long-poll connection',
    200,
    { min: 1 },
  ),
  MAX_BUFFERED_BYTES: int(
    'bytes of events a connection (SSE, WebSocket, socket.io) leaves unread before it is closed as a slow consumer; a resume backlog does not count',
    4 * 1024 * 1024,
    { min: 1024 },
  ),
  CONNECTION_HIGH_WATER_BYTES: int(
    'unsent output at which the hub stops writing to a connection until it drains (the rest waits in the event buffer)',
    256 * 1024,
    { min: 16 * 1024 },
  ),
  LONGPOLL_MAX_RESPONSE_BYTES: int(
    'most bytes of events one long-poll answer carries (at least one event); the cursor moves by what was sent',
    1024 * 1024,
    { min: 16 * 1024 },
  ),
  CONTROL_REQUEST_TIMEOUT: duration(
    'how long a replica waits for the replica holding a connection to answer',
    '2s',
    { min: '100ms' },
  ),
  RESUME_AHEAD_MAX_WAITING: int(
    "connects at once whose resume position is past this replica's newest event and that wait (up to 5 s) for it as reconnect evidence; another counts as new at once",
    10_000,
    { min: 0, max: 1_000_000 },
  ),
  SESSION_KILL_MEMORY: duration(
    'how long a replica remembers a session kill it heard, to end a connect of that session admitted meanwhile on a blacklist read made before the kill was written; never shorter than the longest admission (5 s + SUBSCRIPTION_CHECK_TIMEOUT + CONNECT_CHECK_TIMEOUT + 10 s)',
    '60s',
    { min: '1s', max: '1h' },
  ),
  SESSION_KILL_MEMORY_MAX_SESSIONS: int(
    'session kills a replica remembers at once (SESSION_KILL_MEMORY); the oldest is forgotten first',
    100_000,
    { min: 1, max: 10_000_000 },
  ),
  CONNECTIONS_API_TIMEOUT: duration(
    'how long a connections API request waits for the other replicas; at the time-out it answers with the parts it has, partial, naming the replicas that did not answer',
    '2s',
    { min: '100ms', max: '30s' },
  ),
  PRESENCE_EVENT_TYPES: list(
    'event types with presence: clients may ask who is present (GET /_gw/v1/presence; 403 for another type) and subscribe to their joins and leaves (gw.presence.joined / gw.presence.left); comma-separated, none by default, at most 64',
  ),
  PRESENCE_LEAVE_DELAY: duration(
    "how long a member's leave waits for it to come back (a reconnect, to any replica, is then neither a leave nor a join)",
    '5s',
    { min: '0ms', max: '5m' },
  ),
  PRESENCE_MAX_MEMBERS: int(
    'members announced at once, cluster-wide; beyond, a new member is present in queries but its join and leave are not announced (gw_presence_overflow_total)',
    100_000,
    { min: 1, max: 10_000_000 },
  ),
  PRESENCE_MAX_LISTED: int(
    'connections (members, for clients) a presence answer lists at most; the count is always whole (400 for a larger limit)',
    1000,
    { min: 1, max: 10_000 },
  ),
  PRESENCE_MAX_PLACES_PER_CONNECTION: int(
    "places of PRESENCE_EVENT_TYPES one connection's joins and leaves are announced for (its first ones, in its subscriptions' order); the rest are present in queries only: one client cannot fill PRESENCE_MAX_MEMBERS",
    16,
    { min: 1, max: 1000 },
  ),
  PRESENCE_QUERIES_PER_MINUTE: int(
    'presence queries one client address may make per minute on each replica (GET /_gw/v1/presence; 429 with Retry-After beyond): distinct places each cost a cluster-wide query',
    60,
    { min: 1 },
  ),
  HISTORY_MAX_LIMIT: int(
    'events one history page holds at most (GET /_gw/v1/history `limit`, 400 beyond), and the most a subscription may rewind (`rewind`, taken down to it)',
    100,
    { min: 1, max: 10_000 },
  ),
  HISTORY_MAX_BYTES: int(
    'bytes of event JSON one history page holds at most (at least one event); the page stops there and goes on at its `next`',
    1024 * 1024,
    { min: 64 * 1024, max: 64 * 1024 * 1024 },
  ),
  HISTORY_QUERIES_PER_MINUTE: int(
    "history queries one client address may make per minute on each replica (GET /_gw/v1/history; 429 with Retry-After beyond): a page past the event buffer reads the broker. The console's (GET /v3/history) as many per address, counted apart",
    60,
    { min: 1 },
  ),
  HISTORY_BROKER_SCAN: int(
    "messages of the fan-out stream's newest one history page or rewind past the event buffer reads from the broker at most (the buffer's own among them)",
    20_000,
    { min: 1, max: 1_000_000 },
  ),
  HISTORY_BROKER_READS: int(
    'reads of the fan-out stream one replica runs at once for history pages and rewinds past the event buffer (each a broker subscription); a history query beyond is 503 with Retry-After, a rewinding connection is closed and its client comes back',
    8,
    { min: 1, max: 1000 },
  ),
  HISTORY_BROKER_TIMEOUT: duration(
    'how long a history read from the broker may take before the answer is 503 (Retry-After)',
    '5s',
    { min: '100ms', max: '1m' },
  ),
  LATEST_EVENT_TYPES: list(
    'event types whose newest event (per type, and per value of each extractor field of the type) is kept in the store for clients connecting with `latest=true`; comma-separated, none by default',
  ),
  LATEST_MAX_EVENT_BYTES: int(
    'bytes of CloudEvent JSON a kept latest event may have; a larger one is not kept (its key keeps the previous one)',
    64 * 1024,
    { min: 1024, max: 1024 * 1024 },
  ),
  LATEST_MAX_KEYS: int(
    'distinct latest-value keys (types and field values) one replica has written and the store still holds (until LATEST_TTL after its last write); new keys beyond are not kept (gw_latest_keys_overflow_total)',
    100_000,
    { min: 1, max: 10_000_000 },
  ),
  LATEST_TTL: duration('how long a latest value is kept in the store after its last event', '24h', {
    min: '1s',
    max: '365d',
  }),
  ACK_SESSION_TTL: duration(
    "how long an ack session's acknowledged position is kept in the store after its last acknowledgement (POST /_gw/v1/ack)",
    '7d',
    { min: '1s', max: '365d' },
  ),
  ACK_TIMEOUT: duration(
    'how long the oldest event sent on an ack-session connection may stay unacknowledged before the connection is ended (reason ack_timeout, reconnect) so that it comes again',
    '30s',
    { min: '1s', max: '1h' },
  ),
  ACK_REQUESTS_PER_MINUTE: int(
    'acknowledgements (POST /_gw/v1/ack) one ack session may send per minute on each replica (429 with Retry-After beyond)',
    600,
    { min: 1 },
  ),
  ACK_REQUESTS_PER_SUBJECT_PER_MINUTE: int(
    'acknowledgements (POST /_gw/v1/ack) one subject (JWT iss and sub) may send per minute on each replica, all its session names together (429 with Retry-After beyond): a new name in every ack gets no fresh budget',
    1200,
    { min: 1 },
  ),
  ACK_REQUESTS_PER_ADDRESS_PER_MINUTE: int(
    'acknowledgements (POST /_gw/v1/ack) one client address may send per minute on each replica (429 with Retry-After beyond), taken before the body or the JWT is read: a JWT nobody signed still costs a signature check',
    6000,
    { min: 1 },
  ),
  ACK_MAX_BODY_BYTES: int(
    'bytes of a POST /_gw/v1/ack body besides its token, which MAX_HEADER_VALUE_LENGTH bounds as in a header (413 beyond)',
    1024,
    {
      min: 128,
      max: 64 * 1024,
    },
  ),
  ACK_MAX_SESSIONS_PER_SUBJECT: int(
    'ack sessions one subject (JWT iss and sub) may hold in the store; an acknowledgement of a new session name beyond is refused (409)',
    32,
    { min: 1, max: 10_000 },
  ),
  PRESENCE_CACHE_TTL: duration(
    "how long a replica keeps a place's presence for clients (GET /_gw/v1/presence): one cluster query per place and period, however many clients ask",
    '1s',
    { min: '0ms', max: '1m' },
  ),
  CONNECTIONS_API_MAX_LIMIT: int(
    'the largest page (`limit`) of GET /v3/connections (400 beyond; 100 when not given, or this when smaller)',
    1000,
    { min: 1, max: 10_000 },
  ),
  CONNECTIONS_API_MAX_BYTES: int(
    "bytes of connection entries (JSON) in one replica's part of a connections API answer and in the page it makes; a page stops there (at least one entry) and goes on at its `next` cursor",
    512 * 1024,
    { min: 64 * 1024, max: 16 * 1024 * 1024 },
  ),
  METRICS_MAX_EVENT_TYPES: int(
    'distinct CloudEvent types counted by name in gw_events_forwarded_total; later ones count as "other"',
    100,
    { min: 1 },
  ),
  FANOUT_TOPIC: str('the fan-out stream every hub replica consumes', 'gw.events'),
  ...fanoutFetchConfig(),
  FANOUT_ROUTING: oneOf(
    'all: every replica reads the whole fan-out stream; interest: a replica reads only the event types its connections and waiting long polls subscribe to (NATS, with the publishers on FANOUT_ROUTING=interest; other buses read everything)',
    ['all', 'interest'],
    'all',
  ),
  FANOUT_ROUTING_MAX_TYPES: int(
    'with FANOUT_ROUTING=interest: most event types one replica filters the stream by; with more wanted it reads everything (NATS before 2.10 filters by one)',
    256,
    { min: 1, max: 1024 },
  ),
  FANOUT_ROUTING_LINGER: duration(
    'with FANOUT_ROUTING=interest: how long a replica goes on reading a type after its last subscriber left (each change of the types read reopens the broker consumer)',
    '5s',
    { min: '0ms', max: '10m' },
  ),
  ...lifecycleEventsConfig(),
};

/** The connect hook (admission/connect-hook.ts): off unless CONNECT_CHECK names a URL. */
function connectCheckConfig() {
  return {
    CONNECT_CHECK: {
      description:
        'URL of the connect hook, POSTed at every connect (every transport, reconnects too): it may refuse (401/403), or name the user, add subscriptions, give welcome data and an end (expireAt); empty: off',
      defaultText: '(unset: off)',
      parse: (raw: string | undefined) => connectCheckUrl(raw),
    },
    CONNECT_CHECK_TIMEOUT: duration(
      'time the connect hook has to answer, body included (503 with Retry-After beyond)',
      '2s',
      { min: '100ms', max: '30s' },
    ),
    CONNECT_CHECK_HEADERS: list(
      'request headers passed on to the connect hook, by name (`authorization` and `cookie` only when named here)',
    ),
    CONNECT_CHECK_MAX_RESPONSE_BYTES: int(
      'largest answer body the connect hook may send (503 beyond, the rest not read)',
      64 * 1024,
      { min: 1024, max: 1024 * 1024 },
    ),
    CONNECT_CHECK_MAX_DATA_BYTES: int(
      "bytes of the hook's `data` as JSON, sent to the client in its welcome event (503 beyond)",
      4096,
      { min: 0, max: 64 * 1024 },
    ),
    CONNECT_CHECK_MAX_IN_FLIGHT: int(
      'connect hook calls one replica makes at once; a connect beyond gets 503 with Retry-After without a call (a reconnect storm must not open a socket to the hook per client)',
      200,
      { min: 1 },
    ),
    CONNECT_CHECK_BREAKER_FAILURES: int(
      'connect hook failures in a row (time-outs, errors, 5xx, bad answers) after which connects are refused 503 without calling it, for CONNECT_CHECK_BREAKER_COOLDOWN',
      5,
      { min: 1 },
    ),
    CONNECT_CHECK_BREAKER_COOLDOWN: duration(
      'how long the connect hook is not called once its breaker opened; then one connect tries it',
      '5s',
      { min: '100ms', max: '5m' },
    ),
  };
}

function connectCheckUrl(raw: string | undefined): URL | undefined {
  const text = raw?.trim() ?? '';
  if (text === '') return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`"${text}" is not an http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`"${text}" is not an http(s) URL`);
  return url;
}
/** Lifecycle events on the bus (lifecycle/): off unless LIFECYCLE_EVENTS_TOPIC is set. */
function lifecycleEventsConfig() {
  return {
    LIFECYCLE_EVENTS_TOPIC: optionalStr(
      'topic the hub produces its lifecycle events to (gw.connection.opened, gw.connection.closed, gw.subscriptions.changed); unset: none are made',
    ),
    LIFECYCLE_EVENTS_BUS: oneOf(
      'bus of LIFECYCLE_EVENTS_TOPIC: kafka, nats or kinesis (redis and memory too); its addresses as for FANOUT_BUS',
      busKinds,
      'kafka',
    ),
    LIFECYCLE_EVENTS_BATCH_SIZE: int('lifecycle events produced together in one batch at most', 100, {
      min: 1,
      max: 10_000,
    }),
    LIFECYCLE_EVENTS_FLUSH_INTERVAL: duration(
      'longest a lifecycle event waits for its batch to fill before it is produced',
      '200ms',
      { min: '1ms', max: '1m' },
    ),
    LIFECYCLE_EVENTS_MAX_BUFFER: int(
      'lifecycle events a replica keeps waiting for the bus at most (while it is slow or down); later ones are dropped and counted',
      10_000,
      { min: 1, max: 1_000_000 },
    ),
    LIFECYCLE_EVENTS_MAX_BUFFER_BYTES: int(
      'bytes the lifecycle events waiting for the bus may take at most; later ones are dropped and counted',
      16 * 1024 * 1024,
      { min: 64 * 1024, max: 1024 * 1024 * 1024 },
    ),
  };
}

/**
 * How the replica's fan-out consumer batches its reads (Kafka's fetches; other buses ignore it).
 * kafkajs' cost is per fetch more than per record, so waiting for a few records saves CPU on every
 * replica at low rates, for latency (bench/README.md, "kafka-fetch.bench.ts").
 */
function fanoutFetchConfig() {
  return {
    FANOUT_FETCH_MIN_BYTES: int(
      "bytes of records the broker gathers for a fan-out fetch before it answers (Kafka's fetch.min.bytes; 1: at once)",
      1,
      { min: 1, max: 1024 * 1024 },
    ),
    FANOUT_FETCH_MAX_WAIT: duration(
      "longest the broker holds a fan-out fetch with fewer bytes than FANOUT_FETCH_MIN_BYTES (Kafka's fetch.max.wait.ms): what an event may wait at low rates",
      '1s',
      { min: '1ms', max: '5s' },
    ),
  };
}
