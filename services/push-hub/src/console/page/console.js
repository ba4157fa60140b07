// The operator console: samples GET /v3/replicas (every replica, through the control channel)
// every few seconds, keeps the samples of the last minutes in memory and charts them with
// Vega-Lite; searches and ends connections with the connections API; pages back through the
// history of an event type (GET /v3/history); publishes a test event.
// The data requests carry the internal API's token, which the operator types once per tab.
import { expressionInterpreter } from './assets/vega-interpreter.js';

const { vega, vegaLite } = globalThis;
const SAMPLE_MS = 2000;
/** Ten minutes of samples. */
const KEEP = 300;
const TRANSPORTS = ['sse', 'ws', 'socketio', 'longpolling'];
/** How a hub refuses a connect: bad request or JWT, subscription denied, rate limited, unavailable. */
const REFUSALS = ['400', '403', '429', '503'];
const TOKEN_KEY = 'gatehouse.console.token';
// Relative to this script (…/dashboard/console.js), so the console also works under a path prefix.
const API = new URL('../', import.meta.url);

const $ = (selector) => document.querySelector(selector);
const samples = [];
let waitingForToken = false;

// --- requests -------------------------------------------------------------------------------

class NeedsToken extends Error {}

/** A JSON request to the internal API with the operator's token; a 401 asks for the token. */
async function api(path, init = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const headers = { accept: 'application/json', ...init.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(new URL(path, API), { ...init, headers });
  if (res.status === 401) {
    askForToken();
    throw new NeedsToken('the internal API wants INTERNAL_API_TOKEN');
  }
  const body = await res.json().catch(() => ({}));
  return { status: res.status, body };
}

function askForToken() {
  waitingForToken = true;
  $('#token-form').hidden = false;
  $('#status').textContent = 'needs the token';
  $('#token').focus();
}

$('#token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $('#token').value.trim());
  $('#token').value = '';
  $('#token-form').hidden = true;
  waitingForToken = false;
  void sample();
});

// --- charts ---------------------------------------------------------------------------------

/**
 * A Vega view of a Vega-Lite spec whose data is the named set `rows`, rendered as SVG. Until the
 * first rows are drawn its box shows the loading note next to it (rates need two samples).
 */
function chart(selector, spec) {
  const compiled = vegaLite.compile({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 'container',
    height: 200,
    data: { name: 'rows' },
    ...spec,
  }).spec;
  // `ast` + the interpreter: no `new Function`, so the page runs under script-src 'self'.
  const view = new vega.View(vega.parse(compiled, null, { ast: true }), {
    expr: expressionInterpreter,
    renderer: 'svg',
    container: $(selector),
    hover: true,
  });
  const draw = (rows) =>
    view
      .change(
        'rows',
        vega
          .changeset()
          .remove(() => true)
          .insert(rows),
      )
      .runAsync();
  return async (rows) => {
    await draw(rows);
    if (rows.length > 0) loaded(view.container());
  };
}

/** The chart has data: its loading note goes. */
function loaded(container) {
  container.setAttribute('aria-busy', 'false');
  container.parentElement.querySelector('.loading').hidden = true;
}

const time = { field: 't', type: 'temporal', title: null, axis: { format: '%H:%M:%S' } };

/**
 * Each transport its own colour, the same on every replica (named in the legend); each replica its
 * dash. Equal counts draw lines on top of each other: the earlier transports' lines are wider, so
 * a line under another shows as its border.
 */
const byTransport = {
  field: 'transport',
  type: 'nominal',
  scale: { domain: TRANSPORTS, range: ['#4c78a8', '#e45756', '#54a24b', '#b279a2'] },
};

const connectionsChart = chart('#chart-connections', {
  mark: { type: 'line', interpolate: 'step-after' },
  encoding: {
    x: time,
    y: { field: 'n', type: 'quantitative', title: 'connections' },
    color: byTransport,
    strokeWidth: {
      ...byTransport,
      type: 'ordinal',
      scale: { domain: TRANSPORTS, range: [6, 3.5, 2, 1] },
    },
    strokeDash: { field: 'replica', type: 'nominal' },
    tooltip: [{ field: 'replica' }, { field: 'transport' }, { field: 'n', type: 'quantitative' }],
  },
});

const throughputChart = chart('#chart-throughput', {
  // Points too: lines that coincide (events in = deliveries out) stay visible.
  mark: { type: 'line', point: true },
  encoding: {
    x: time,
    y: { field: 'perSecond', type: 'quantitative', title: 'per second', axis: { format: ',.2~f' } },
    color: { field: 'what', type: 'nominal', title: null },
  },
});

const connectsChart = chart('#chart-connects', {
  // Points too: lines that coincide (events in = deliveries out) stay visible.
  mark: { type: 'line', point: true },
  encoding: {
    x: time,
    y: { field: 'perSecond', type: 'quantitative', title: 'per second', axis: { format: ',.2~f' } },
    color: { field: 'what', type: 'nominal', title: null },
  },
});

const latencyChart = chart('#chart-latency', {
  mark: 'bar',
  encoding: {
    x: { field: 'bucket', type: 'ordinal', sort: null, title: 'seconds (≤ bucket bound)' },
    y: { field: 'events', type: 'quantitative', title: 'events' },
    tooltip: [{ field: 'bucket' }, { field: 'events', type: 'quantitative' }],
  },
});

// --- sampling -------------------------------------------------------------------------------

async function sample() {
  if (waitingForToken) return;
  try {
    const { status, body } = await api('v3/replicas');
    if (status !== 200) throw new Error(body.error ?? `HTTP ${status}`);
    samples.push({ t: Date.now(), replicas: body.replicas });
    if (samples.length > KEEP) samples.shift();
    showCoverage(body);
    showReplicas(body.replicas);
    // The store's count, the same for the whole cluster; null when the store could not count.
    $('#blacklisted').textContent =
      body.blacklistedSessions === null ? 'unknown' : String(body.blacklistedSessions);
    await drawCharts();
    $('#status').textContent = `live · ${body.replicas.length} replicas · ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    if (!(err instanceof NeedsToken)) $('#status').textContent = `no answer: ${err.message}`;
  }
}

/** Names the replicas that did not answer in time: their numbers are absent from every panel. */
function showCoverage({ partial, missing }) {
  const el = $('#missing');
  el.hidden = !partial;
  el.textContent = partial ? `partial: no answer from ${missing.join(', ')}` : '';
}

function cell(text, numeric = false, field = undefined) {
  const td = document.createElement('td');
  td.textContent = String(text);
  if (numeric) td.className = 'n';
  if (field) td.dataset.field = field;
  return td;
}

function totalOf(r) {
  return TRANSPORTS.reduce((sum, t) => sum + r.connections[t], 0);
}

function showReplicas(replicas) {
  const now = Date.now();
  const rows = replicas.map((r) => {
    const tr = document.createElement('tr');
    tr.dataset.replica = r.replica;
    const age = r.fanout.lastEventAt
      ? `${((now - Date.parse(r.fanout.lastEventAt)) / 1000).toFixed(1)} s`
      : '–';
    tr.append(
      cell(r.replica),
      ...TRANSPORTS.map((t) => cell(r.connections[t], true, t)),
      cell(totalOf(r), true, 'total'),
      cell(r.connectionsBehind, true, 'behind'),
      cell(r.deliveriesPerSecond, true, 'deliveriesPerSecond'),
      cell(r.fanout.position ?? '–', false, 'position'),
      cell(age, true, 'lastEventAge'),
      cell(r.fanout.lagSeconds === undefined ? '–' : `${r.fanout.lagSeconds.toFixed(3)} s`, true, 'lag'),
      cell(r.counters.connects, true, 'connects'),
      ...REFUSALS.map((status) => cell(r.counters.refused[status] ?? 0, true, `refused${status}`)),
      cell(r.counters.sessionKills, true, 'sessionKills'),
      cell(r.counters.slowConsumerDisconnects, true, 'slowConsumerDisconnects'),
    );
    return tr;
  });
  $('#replicas tbody').replaceChildren(...rows);
}

/** Per second between two samples of a counter, summed over the replicas in both (a restart, a drop, is skipped). */
function rate(before, after, read) {
  let sum = 0;
  for (const r of after.replicas) {
    const b = before.replicas.find((x) => x.replica === r.replica);
    if (!b) continue;
    const d = read(r.counters) - read(b.counters);
    if (d >= 0) sum += d;
  }
  return sum / ((after.t - before.t) / 1000);
}

const rateSeries = {
  throughput: {
    'events in': (c) => c.eventsIn,
    'deliveries out': (c) => c.deliveries,
  },
  connects: {
    connects: (c) => c.connects,
    ...Object.fromEntries(REFUSALS.map((status) => [`refused ${status}`, (c) => c.refused[status] ?? 0])),
  },
};

function rateRows(series) {
  const rows = [];
  for (let i = 1; i < samples.length; i++)
    for (const [what, read] of Object.entries(series))
      rows.push({ t: samples[i].t, what, perSecond: rate(samples[i - 1], samples[i], read) });
  return rows;
}

/** The latency histogram of the last minute: bucket counts now minus those of a minute ago. */
function latencyRows() {
  const last = samples.at(-1);
  const first = samples.find((s) => s.t >= last.t - 60_000) ?? last;
  const bounds = last.replicas[0]?.counters.delivery.bounds ?? [];
  const events = [...bounds, Infinity].map(() => 0);
  for (const r of last.replicas) {
    const b = first === last ? undefined : first.replicas.find((x) => x.replica === r.replica);
    r.counters.delivery.counts.forEach((n, i) => {
      const d = n - (b?.counters.delivery.counts[i] ?? 0);
      if (d > 0) events[i] += d;
    });
  }
  return events.map((n, i) => ({
    bucket: i < bounds.length ? `≤ ${bounds[i]}` : `> ${bounds.at(-1)}`,
    events: n,
  }));
}

function drawCharts() {
  const connections = samples.flatMap((s) =>
    s.replicas.flatMap((r) =>
      TRANSPORTS.map((transport) => ({ t: s.t, replica: r.replica, transport, n: r.connections[transport] })),
    ),
  );
  return Promise.all([
    connectionsChart(connections),
    throughputChart(rateRows(rateSeries.throughput)),
    connectsChart(rateRows(rateSeries.connects)),
    latencyChart(latencyRows()),
  ]);
}

// --- finding and ending a connection --------------------------------------------------------

/** The connection whose detail is shown, and the last search (both redrawn after a disconnect). */
let chosen;
let lastQuery;

$('#search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const query = new URLSearchParams();
  for (const [k, v] of new FormData(e.target)) if (String(v).trim()) query.set(k, String(v).trim());
  query.set('limit', '100');
  lastQuery = query;
  void search(query);
});

async function search(query) {
  try {
    const { status, body } = await api(`v3/connections?${query}`);
    if (status === 200) showResults(body);
    else $('#search-note').textContent = body.error ?? `HTTP ${status}`;
  } catch (err) {
    $('#search-note').textContent = err.message;
  }
}

function showResults({ connections, next, partial, missing }) {
  const notes = [`${connections.length} connection(s)`];
  if (next) notes.push('more exist: narrow the search');
  if (partial) notes.push(`partial: no answer from ${missing.join(', ')}`);
  $('#search-note').textContent = notes.join(' · ');
  const rows = connections.map((c) => {
    const tr = document.createElement('tr');
    tr.dataset.id = c.id;
    tr.classList.toggle('chosen', c.id === chosen);
    tr.append(
      cell(c.id),
      cell(c.replica),
      cell(c.transport),
      cell(c.session ?? '–'),
      cell(c.user ?? '–'),
      cell(c.connectedAt),
      cell(c.subscriptions.map((s) => s.eventType).join(', ')),
    );
    tr.addEventListener('click', () => void choose(c.id, tr));
    return tr;
  });
  $('#results tbody').replaceChildren(...rows);
}

async function choose(id, tr) {
  for (const row of document.querySelectorAll('#results tr.chosen')) row.classList.remove('chosen');
  tr.classList.add('chosen');
  chosen = id;
  $('#detail').hidden = false;
  $('#detail-id').textContent = id;
  $('#disconnect-note').textContent = '';
  $('#subscriptions-note').textContent = '';
  await showDetail(id);
}

/** The connection as its replica sees it now. */
async function showDetail(id) {
  const { status, body } = await api(`v3/connections/${encodeURIComponent(id)}`);
  if (status === 404) return showGone(body.error);
  $('#detail-json').textContent = JSON.stringify(status === 200 ? body.connection : body, null, 2);
  if (status === 200) $('#subscriptions-json').value = JSON.stringify(body.connection.subscriptions);
  $('#disconnect-form button').disabled = false;
  $('#subscriptions-form button').disabled = false;
}

/** The detail of a connection that ended: nothing left to show or to disconnect. */
function showGone(why) {
  $('#detail-json').textContent = `no longer connected: ${why}`;
  $('#disconnect-form button').disabled = true;
  $('#subscriptions-form button').disabled = true;
}

// Server-side subscriptions: the chosen connection's list replaced (its JWT-inferred part kept).
$('#subscriptions-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  if (!chosen) return;
  const text = String(new FormData(e.target).get('subscriptions') ?? '').trim();
  let subscriptions;
  try {
    subscriptions = JSON.parse(text);
  } catch {
    $('#subscriptions-note').textContent = 'not set: the subscriptions must be a JSON list';
    return;
  }
  try {
    const { status, body } = await api(`v3/connections/${encodeURIComponent(chosen)}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions }),
    });
    if (status === 404) return showGone(body.error);
    $('#subscriptions-note').textContent =
      status === 204 ? `subscriptions set on ${chosen}` : `not set: ${body.error ?? `HTTP ${status}`}`;
    if (status === 204) await showDetail(chosen);
  } catch (err) {
    $('#subscriptions-note').textContent = err.message;
  }
});

$('#disconnect-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  if (!chosen) return;
  const form = new FormData(e.target);
  const query = new URLSearchParams({ reconnect: String(form.get('reconnect') === 'on') });
  const reason = String(form.get('reason') ?? '').trim();
  if (reason) query.set('reason', reason);
  try {
    const { status, body } = await api(`v3/connections/${encodeURIComponent(chosen)}?${query}`, {
      method: 'DELETE',
    });
    $('#disconnect-note').textContent =
      status === 200 ? `disconnected ${chosen}` : `not disconnected: ${body.error ?? `HTTP ${status}`}`;
    if (status !== 200 && status !== 404) return;
    // It is gone (ended now, or before): the detail says so (asking for it again would only answer
    // 404), the list is asked again (without it, or with the new connection of a client that came back).
    showGone(status === 200 ? `ended ${new Date().toLocaleTimeString()} by this console` : body.error);
    if (lastQuery) await search(lastQuery);
  } catch (err) {
    $('#disconnect-note').textContent = err.message;
  }
});

// --- presence -------------------------------------------------------------------------------

$('#presence-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const query = new URLSearchParams();
  for (const [k, v] of new FormData(e.target)) if (String(v).trim()) query.set(k, String(v).trim());
  try {
    const { status, body } = await api(`v3/presence?${query}`);
    if (status === 200) showPresence(body);
    else $('#presence-note').textContent = body.error ?? `HTTP ${status}`;
  } catch (err) {
    $('#presence-note').textContent = err.message;
  }
});

/** Who is present, cluster-wide: the count, and the connections listed. */
function showPresence({ count, connections, complete, partial, missing }) {
  const notes = [`${count} present`];
  if (!complete) notes.push(`${connections.length} listed`);
  if (partial) notes.push(`partial: no answer from ${missing.join(', ')}`);
  $('#presence-note').textContent = notes.join(' · ');
  const rows = connections.map((c) => {
    const tr = document.createElement('tr');
    tr.dataset.id = c.connection;
    tr.append(
      cell(c.connection),
      cell(c.replica),
      cell(c.transport),
      cell(c.user ?? '–'),
      cell(c.session ?? '–'),
      cell(c.since),
    );
    return tr;
  });
  $('#presence tbody').replaceChildren(...rows);
}

// --- history --------------------------------------------------------------------------------

/**
 * The history query shown, the `before` of each page from the newest to the one shown (the newest
 * has none), and the `next` of the page shown (absent: nothing older is known).
 */
const historyView = { query: new URLSearchParams(), befores: [], next: undefined };

$('#history-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const query = new URLSearchParams();
  for (const [k, v] of new FormData(e.target)) if (String(v).trim()) query.set(k, String(v).trim());
  historyView.query = query;
  void showHistoryPage([undefined]);
});

$('#history-older').addEventListener('click', () => {
  void showHistoryPage([...historyView.befores, historyView.next]);
});

$('#history-newer').addEventListener('click', () => {
  void showHistoryPage(historyView.befores.slice(0, -1));
});

/** The page before the last of `befores` (GET /v3/history); the view moves there once it is in. */
async function showHistoryPage(befores) {
  const query = new URLSearchParams(historyView.query);
  const before = befores.at(-1);
  if (before !== undefined) query.set('before', before);
  try {
    const { status, body } = await api(`v3/history?${query}`);
    if (status !== 200) {
      $('#history-note').textContent = body.error ?? `HTTP ${status}`;
      return;
    }
    historyView.befores = befores;
    historyView.next = body.next;
    showHistory(body, befores.length);
  } catch (err) {
    $('#history-note').textContent = err.message;
  }
}

/** Events are attacker-written: every value goes in as text, never as markup. */
function showHistory({ eventType, events, next }, pageNumber) {
  const notes = [`${eventType}: page ${pageNumber}, ${events.length} event(s), newest first`];
  if (next === undefined) notes.push('nothing older is known');
  $('#history-note').textContent = notes.join(' · ');
  const rows = events.map(({ position, event }) => {
    const tr = document.createElement('tr');
    tr.dataset.position = position;
    const json = document.createElement('pre');
    json.textContent = JSON.stringify(event, null, 2);
    const eventCell = document.createElement('td');
    eventCell.append(json);
    tr.append(
      cell(position),
      cell(event?.time ?? '–'),
      cell(event?.source ?? '–'),
      cell(event?.id ?? '–'),
      eventCell,
    );
    return tr;
  });
  $('#history tbody').replaceChildren(...rows);
  $('#history-newer').disabled = pageNumber <= 1;
  $('#history-older').disabled = next === undefined;
}

// --- the test event -------------------------------------------------------------------------

$('#test-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const type = String(new FormData(e.target).get('type')).trim();
  try {
    const { status, body } = await api('v3/console/test-event', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type }),
    });
    if (status === 200) showReached(body);
    else $('#test-note').textContent = body.error ?? `HTTP ${status}`;
  } catch (err) {
    $('#test-note').textContent = err.message;
  }
});

/** The connections subscribed to the event's type when it was published, per replica. */
function showReached({ event, connections, next, partial, missing }) {
  const notes = [
    `published ${event.type} (id ${event.id}) to ${connections.length} subscribed connection(s)`,
  ];
  if (next) notes.push('list cut at the page limit');
  if (partial) notes.push(`partial: no answer from ${missing.join(', ')}`);
  $('#test-note').textContent = notes.join(' · ');
  const byReplica = Map.groupBy(connections, (c) => c.replica);
  const items = [...byReplica].map(([replica, list]) => {
    const li = document.createElement('li');
    li.dataset.replica = replica;
    li.textContent = `${replica}: `;
    for (const c of list) {
      const code = document.createElement('code');
      code.dataset.id = c.id;
      code.textContent = `${c.id} (${c.transport}${c.session ? `, session ${c.session}` : ''}) `;
      li.append(code);
    }
    return li;
  });
  $('#test-reached').replaceChildren(...items);
}

// The next sample only after the last one is in: an answer may take CONNECTIONS_API_TIMEOUT (2 s).
async function sampleForever() {
  await sample();
  setTimeout(sampleForever, SAMPLE_MS);
}
void sampleForever();
