/** The cluster bench's results as Markdown (printed, and what bench/results/ keeps). */
import type { Counted } from './measure.ts';
import { type ChurnResult, sustainedChurn } from './scenario-churn.ts';
import type { RigResult } from './scenario-rig.ts';
import type { CpuWindow, LatencyFigures, S2Result, S4Result } from './scenarios.ts';

const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(v < 10 ? 1 : 0)}` : '–');
const us = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)} µs` : '–');

function hubsCpu(w: CpuWindow): number {
  return Object.entries(w.cpu)
    .filter(([k]) => k.startsWith('hub-'))
    .reduce((a, [, v]) => a + v, 0);
}

function latencyRow(name: string, f: LatencyFigures | undefined): string {
  return f
    ? `| ${name} | ${f.count} | ${ms(f.p50)} | ${ms(f.p99)} | ${ms(f.max)} |`
    : `| ${name} | 0 | – | – | – |`;
}

function latencyTable(byKey: Record<string, LatencyFigures> | undefined): string[] {
  return [
    '| transport | deliveries | p50 ms | p99 ms | max ms |',
    '| --- | --- | --- | --- | --- |',
    ...['all', 'sse', 'ws', 'longpolling'].map((k) => latencyRow(k, byKey?.[k])),
  ];
}

function cpuTable(w: CpuWindow): string[] {
  const per = (v: number, n: number) => (n > 0 ? us((v * 1e6) / n) : '–');
  return [
    '| process | CPU s | % of a core | µs per delivery | µs per event |',
    '| --- | --- | --- | --- | --- |',
    ...Object.entries(w.cpu).map(
      ([k, v]) =>
        `| ${k} | ${v.toFixed(2)} | ${((100 * v) / w.seconds).toFixed(0)} % | ${per(v, w.deliveries)} | ${per(v, w.events)} |`,
    ),
    `| **hubs + publisher** | ${(hubsCpu(w) + (w.cpu['publisher'] ?? 0)).toFixed(2)} | | ${per(hubsCpu(w) + (w.cpu['publisher'] ?? 0), w.deliveries)} | |`,
    `| **everything** | ${Object.values(w.cpu)
      .reduce((a, v) => a + v, 0)
      .toFixed(
        2,
      )} | ${((100 * Object.values(w.cpu).reduce((a, v) => a + v, 0)) / w.seconds).toFixed(0)} % | ${per(
      Object.values(w.cpu).reduce((a, v) => a + v, 0),
      w.deliveries,
    )} | |`,
    `| *the whole box (/proc/stat; others' work included)* | ${w.boxBusy.toFixed(2)} | ${((100 * w.boxBusy) / w.seconds).toFixed(0)} % | | |`,
  ];
}

export function s2Markdown(r: S2Result): string {
  const o = r.options;
  const lines = [
    `### S2: ${o.connections} connections, ${o.replicas} replicas, ${o.rate} events/s`,
    '',
    `${o.types} event types, ${o.subscriptions} per client; SSE / WebSocket / long-polling a third each, half with a JWT; ` +
      `load average ${r.loadAtStart.toFixed(1)} at the start, ${r.loadAtEnd.toFixed(1)} at the end.` +
      (r.stoppedAt ? ` **Stopped early: ${r.stoppedAt}.**` : ''),
    '',
    `Connected in ${r.connectSeconds.toFixed(1)} s (${o.connectRate}/s offered); refusals seen ${JSON.stringify(r.refusals)}.`,
    '',
  ];
  if (r.memory.length > 0) {
    const total = r.memory.reduce((a, m) => a + m.loadedRss - m.idleRss, 0);
    lines.push(
      '| replica | connections | RSS idle | RSS loaded | RSS per connection |',
      '| --- | --- | --- | --- | --- |',
      ...r.memory.map(
        (m) =>
          `| ${m.name} | ${m.connections} | ${mib(m.idleRss)} | ${mib(m.loadedRss)} | ${m.connections ? kib((m.loadedRss - m.idleRss) / m.connections) : '–'} |`,
      ),
      `| all | ${r.memory.reduce((a, m) => a + m.connections, 0)} | ${mib(r.memory.reduce((a, m) => a + m.idleRss, 0))} | ${mib(r.memory.reduce((a, m) => a + m.loadedRss, 0))} | ${kib(total / o.connections)} |`,
      '',
      `Client processes together: ${mib(r.clientRss)} RSS.`,
      '',
    );
  }
  if (r.steady) {
    lines.push(
      `Steady window: ${r.steady.seconds.toFixed(1)} s, ${r.steady.events} events, ${r.steady.deliveries} deliveries (${(r.steady.deliveries / r.steady.seconds).toFixed(0)}/s).`,
      '',
      ...latencyTable(r.latency['steady']),
      '',
      ...cpuTable(r.steady),
      '',
    );
  }
  if (r.kill) {
    const k = r.kill;
    lines.push(
      `Kill: ${k.replica} SIGKILLed holding ${k.watched} clients; ${k.back} back on the others, p50 ${ms(k.backP50)} ms, p99 ${ms(k.backP99)} ms, ` +
        `the last ${ms(k.backMax)} ms after the kill (time to recover); by transport ${Object.entries(
          k.byTransport,
        )
          .map(([t, v]) => `${t} ${v.back}/${v.watched}`)
          .join(', ')}. Over the recovery (${k.cpu.seconds.toFixed(1)} s, ${k.cpu.events} events):`,
      '',
      ...cpuTable(k.cpu),
      '',
      'Latency of the events published during the recovery (the resumed clients get them late by design):',
      '',
      ...latencyTable(r.latency['recovery']),
      '',
    );
  }
  if (r.counted) {
    const c = r.counted;
    lines.push(
      `Counted: ${c.owed} (client, event) pairs owed, **lost ${c.lost}, duplicated ${c.duplicated}**, unwanted ${c.unwanted}, ` +
        `resyncs ${c.resyncs}; copies of never-accepted events ${c.unacceptedDeliveries}, out of range ${c.beyondRange}. ` +
        `By transport: ${Object.entries(c.byTransport)
          .map(
            ([t, v]) =>
              `${t} owed ${v.owed}, lost ${v.lost} (${v.lostByOpen} of them by clients open at the tally), duplicated ${v.duplicated}`,
          )
          .join('; ')}. Producer failures ${JSON.stringify(r.producerFailures)}.`,
      ...(c.lostExamples.length ? ['', `Lost, e.g.: ${c.lostExamples.join('; ')}`] : []),
      '',
    );
  }
  return lines.join('\n');
}

/** CPU µs per event of one process over a window, less its quiet rate × the window. */
export function lessQuiet(w: CpuWindow, quiet: CpuWindow, name: string): number {
  const own = (w.cpu[name] ?? 0) - ((quiet.cpu[name] ?? 0) / quiet.seconds) * w.seconds;
  return (own * 1e6) / w.events;
}

export function s4Markdown(r: S4Result): string {
  const o = r.options;
  const lines = [
    `### S4: ${o.connections} connections over ${r.rows.map((row) => row.replicas).join(', ')} replicas, ${o.rate} events/s, plus a bystander replica`,
    '',
    `${o.types} event types, ${o.subscriptions} per client; the bystander holds ${r.bystanders} clients subscribed only to types nobody publishes; ` +
      `load average ${r.loadAtStart.toFixed(1)} at the start, ${r.loadAtEnd.toFixed(1)} at the end.` +
      (r.stoppedAt ? ` **Stopped early: ${r.stoppedAt}.**` : ''),
    '',
    'Steady window (the flowing types). "less quiet": each replica\'s CPU less its own rate in the quiet window (connections open, no events) × the window.',
    '',
    '| replicas | held per replica | events | deliveries | hubs CPU µs/event | hubs µs/event less quiet | per replica µs/event less quiet | hubs µs/delivery less quiet | bystander µs/event less quiet | quiet CPU per replica | p50 / p99 ms | lost / duplicated |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of r.rows) {
    const w = row.steady;
    const names = Object.keys(w.cpu).filter((k) => k.startsWith('hub-'));
    const ordinary = names.slice(0, row.replicas);
    const bystander = names[row.replicas]!;
    const hubs = ordinary.reduce((a, k) => a + w.cpu[k]!, 0);
    const perReplica = ordinary.map((k) => lessQuiet(w, row.quiet, k));
    const hubsLess = perReplica.reduce((a, v) => a + v, 0);
    lines.push(
      `| ${row.replicas} | ${row.held.slice(0, row.replicas).join(', ')} | ${w.events} | ${w.deliveries} | ${us((hubs * 1e6) / w.events)} | ${us(hubsLess)} | ` +
        `${perReplica.map((v) => v.toFixed(0)).join(', ')} | ${us((hubsLess * w.events) / w.deliveries)} | ${us(lessQuiet(w, row.quiet, bystander))} | ` +
        `${ordinary.map((k) => `${((1000 * row.quiet.cpu[k]!) / row.quiet.seconds).toFixed(0)}`).join(', ')} ms/s (bystander ${((1000 * row.quiet.cpu[bystander]!) / row.quiet.seconds).toFixed(0)}) | ` +
        `${ms(row.latency['all']?.p50 ?? Number.NaN)} / ${ms(row.latency['all']?.p99 ?? Number.NaN)} | ${row.counted.lost} / ${row.counted.duplicated} |`,
    );
  }
  lines.push(
    '',
    `Events nobody wants (type \`cl.nobody\`, no subscriber anywhere, ${r.unwantedRate}/s): CPU per event of each replica less its quiet rate (the bystander last):`,
    '',
    '| replicas | events | per replica µs/event (each; bystander last) | publisher µs/event | kafka µs/event |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const row of r.rows) {
    const w = row.unwanted;
    const names = Object.keys(w.cpu).filter((k) => k.startsWith('hub-'));
    lines.push(
      `| ${row.replicas} | ${w.events} | ${names.map((k) => lessQuiet(w, row.quiet, k).toFixed(0)).join(', ')} | ${lessQuiet(w, row.quiet, 'publisher').toFixed(0)} | ${lessQuiet(w, row.quiet, 'kafka').toFixed(0)} |`,
    );
  }
  lines.push(
    '',
    'Other processes per row (CPU s over the steady window): ' +
      r.rows
        .map(
          (row) =>
            `${row.replicas}: publisher ${row.steady.cpu['publisher']!.toFixed(2)}, kafka ${row.steady.cpu['kafka']!.toFixed(2)}, redis ${row.steady.cpu['redis']!.toFixed(2)}, clients ${row.steady.cpu['clients']!.toFixed(2)}, the whole box ${row.steady.boxBusy.toFixed(2)} (${row.steady.seconds.toFixed(1)} s)`,
        )
        .join('; '),
    '',
  );
  return lines.join('\n');
}

function countedLine(c: Counted): string {
  return (
    `Counted: ${c.owed} (client, event) pairs owed, **lost ${c.lost}, duplicated ${c.duplicated}**, unwanted ${c.unwanted}, ` +
    `resyncs ${c.resyncs}, copies of events owed to nobody ${c.beyondRange}. By transport: ${Object.entries(
      c.byTransport,
    )
      .map(([t, v]) => `${t} owed ${v.owed}, lost ${v.lost}, duplicated ${v.duplicated}`)
      .join('; ')}.` +
    (c.lostExamples.length ? ` Lost, e.g.: ${c.lostExamples.join('; ')}` : '')
  );
}

export function rigMarkdown(r: RigResult): string {
  const o = r.options;
  const s = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'not within the timeout');
  const lines = [
    `### S1 (RIG's scenarios): ${o.events.toLocaleString('en')} records of ${o.bytes} B produced to Kafka, ${o.replicas} replicas`,
    '',
    `Every ${o.relevantEvery.toLocaleString('en')}th record (and the first and the last) is of one of ${o.types} flowing types, ${o.subscriptions} per client; the rest of a type nobody subscribes to. ` +
      `A bare kafkajs consume loop (\`eachBatch\`, counting) reads the same topic beside the replicas. Load average ${r.loadAtStart.toFixed(1)} at the start, ${r.loadAtEnd.toFixed(1)} at the end. Seconds from the first record produced.`,
    '',
    '| clients | produced (s) | each replica read all (s) | bare loop read all (s) | replica ÷ bare, slowest | clients had every owed pair (s) | pairs owed | hub CPU µs per record, each | bare loop CPU µs per record | kafka CPU µs per record | publish → client p50 / p99 ms | lost / duplicated |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of r.rows) {
    const hubs = Object.keys(row.cpu.cpu).filter((k) => k.startsWith('hub-'));
    const slowest = Math.max(...row.replicaSeconds);
    lines.push(
      `| ${row.clients} | ${s(row.produceSeconds)} | ${row.replicaSeconds.map(s).join(', ')} | ${s(row.bareSeconds)} | ${(row.bareSeconds / slowest).toFixed(2)}× speed | ${s(row.clientsSeconds)} | ${row.owed} | ` +
        `${hubs.map((k) => ((row.cpu.cpu[k]! * 1e6) / o.events).toFixed(1)).join(', ')} | ${((row.bareCpuSeconds * 1e6) / o.events).toFixed(1)} | ${(((row.cpu.cpu['kafka'] ?? 0) * 1e6) / o.events).toFixed(1)} | ` +
        `${ms(row.latency?.p50 ?? Number.NaN)} / ${ms(row.latency?.p99 ?? Number.NaN)} | ${row.counted ? `${row.counted.lost} / ${row.counted.duplicated}` : '–'} |`,
    );
  }
  for (const row of r.rows) {
    lines.push(
      '',
      `${row.clients} clients${row.stoppedAt ? ` (**stopped: ${row.stoppedAt}**)` : ''}:`,
      '',
      ...cpuTable(row.cpu),
    );
    if (row.counted) lines.push('', countedLine(row.counted));
  }
  lines.push('');
  return lines.join('\n');
}

export function churnMarkdown(r: ChurnResult): string {
  const o = r.options;
  const best = sustainedChurn(r);
  const lines = [
    `### S3 (churn): ${o.connections} connections, ${o.replicas} replicas, ${o.rate} events/s, churn steps ${r.churnRates.join(', ')}/s of ${o.seconds} s`,
    '',
    `SSE and WebSocket clients (two thirds) close and reconnect at once, resuming; load average ${r.loadAtStart.toFixed(1)} at the start, ${r.loadAtEnd.toFixed(1)} at the end; connected in ${r.connectSeconds.toFixed(1)} s.` +
      (r.stoppedAt ? ` **Stopped early: ${r.stoppedAt}.**` : ''),
    '',
    '| churn asked /s | reconnects asked | done | done /s | per minute | close → first frame p50 / p99 ms | hub CPU µs per reconnect (less calm) | hubs % of a core | delivery p50 / p99 ms |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  if (r.calm)
    lines.push(
      `| 0 (calm) | – | – | – | – | – | – | ${(
        (100 *
          Object.entries(r.calm.cpu)
            .filter(([k]) => k.startsWith('hub-'))
            .reduce((a, [, v]) => a + v, 0)) /
          r.calm.seconds
      ).toFixed(
        0,
      )} % | ${ms(r.calmDelivery?.p50 ?? Number.NaN)} / ${ms(r.calmDelivery?.p99 ?? Number.NaN)} |`,
    );
  for (const st of r.steps) {
    const hubs = Object.entries(st.cpu.cpu)
      .filter(([k]) => k.startsWith('hub-'))
      .reduce((a, [, v]) => a + v, 0);
    const perSecond = st.reopened / st.cpu.seconds;
    lines.push(
      `| ${st.rate} | ${st.requested} | ${st.reopened} | ${perSecond.toFixed(0)} | ${(perSecond * 60).toFixed(0)} | ${ms(st.reconnect.p50)} / ${ms(st.reconnect.p99)} | ${us(st.hubCpuPerReconnect)} | ${((100 * hubs) / st.cpu.seconds).toFixed(0)} % | ${ms(st.delivery?.p50 ?? Number.NaN)} / ${ms(st.delivery?.p99 ?? Number.NaN)} |`,
    );
  }
  lines.push(
    '',
    best
      ? `Highest step sustained (≥ 95 % of the reconnects asked for were made and done): **${best.rate}/s** (${((best.reopened / best.cpu.seconds) * 60).toFixed(0)} a minute), delivery p99 ${ms(best.delivery?.p99 ?? Number.NaN)} ms during it.`
      : 'No step was sustained.',
  );
  if (r.counted) lines.push('', countedLine(r.counted));
  for (const st of r.steps) lines.push('', `Churn ${st.rate}/s:`, '', ...cpuTable(st.cpu));
  lines.push('');
  return lines.join('\n');
}
