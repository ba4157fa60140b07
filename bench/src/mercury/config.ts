/**
 * The one configuration both sides of mercury.bench.ts read: a folder with rest.yaml, flows.yaml,
 * the flow files and a static folder, every location written as `file:` so Mercury (system
 * properties) and Gatehouse (application.yml) load the very same files. Tracing is left off (the
 * default) on every endpoint: Mercury's examples turn it on, and then it logs every span.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a row sends and how its answer is recognised. */
export interface Row {
  id: string;
  what: string;
  path: string;
  /** A wrk Lua script (the upload's POST), else a GET. */
  script?: string;
  /** Throws when an answer is not the one both sides must give. */
  check(status: number, body: string): void;
}

export interface BenchConfig {
  dir: string;
  /** The locations both sides are given. */
  restYaml: string;
  flowsYaml: string;
  staticFolder: string;
  rows: Row[];
}

const staticBytes = 4096;
const uploadBytes = 16 * 1024;
const boundary = 'gatehouse-bench-boundary';

const step = (name: string, input: string[], output: string[], execution: string, extra = '') =>
  `  - name: '${name}'
    process: 'no.op'
    description: '${name}'
    input: [${input.map((l) => `'${l}'`).join(', ')}]
    output: [${output.map((l) => `'${l}'`).join(', ')}]
    execution: ${execution}
${extra}`;

const flows: Record<string, string> = {
  'three-noop': `flow: { id: 'three-noop', description: 'three no.op tasks in a row', ttl: 10s }
first.task: 'one'
tasks:
${step('one', ['input.path_parameter.id -> id'], ['result.id -> model.id'], 'sequential', "    next: ['two']\n")}
${step('two', ['model.id -> id'], ['result.id -> model.id'], 'sequential', "    next: ['three']\n")}
${step('three', ['model.id -> id'], ['result -> output.body'], 'end')}`,
  'fork-join': `flow: { id: 'fork-join', description: 'a fork of two no.op branches and a join', ttl: 10s }
first.task: 'split'
tasks:
${step('split', ['input.path_parameter.id -> id'], ['result.id -> model.id'], 'fork', "    next: ['left', 'right']\n    join: 'join'\n")}
${step('left', ['model.id -> id'], ['result.id -> model.left'], 'sink')}
${step('right', ['model.id -> id'], ['result.id -> model.right'], 'sink')}
${step('join', ['model.left -> left', 'model.right -> right'], ['result -> output.body'], 'end')}`,
  parent: `flow: { id: 'parent', description: 'calls a sub-flow', ttl: 10s }
first.task: 'call.child'
tasks:
  - name: 'call.child'
    process: 'flow://child'
    description: 'the sub-flow'
    input: ['input.path_parameter.id -> id']
    output: ['result -> model.child']
    execution: sequential
    next: ['done']
${step('done', ['model.child -> child'], ['result -> output.body'], 'end')}`,
  child: `flow: { id: 'child', description: 'the sub-flow of parent', ttl: 10s }
first.task: 'echo'
tasks:
${step('echo', ['input.body.id -> id'], ['result -> output.body'], 'end')}`,
  decision: `flow: { id: 'decision', description: 'a boolean decision between two no.op tasks', ttl: 10s }
first.task: 'decide'
tasks:
${step('decide', ['boolean(true) -> flag'], ['result.flag -> decision'], 'decision', "    next: ['yes', 'no']\n")}
${step('yes', ['text(yes) -> answer'], ['result -> output.body'], 'end')}
${step('no', ['text(no) -> answer'], ['result -> output.body'], 'end')}`,
};

const endpoint = (url: string, service: string, more = '') =>
  `  - { service: '${service}', methods: [GET, POST], url: '${url}', timeout: 10s${more} }`;

function json(body: string): Record<string, unknown> {
  return JSON.parse(body) as Record<string, unknown>;
}

function expect(ok: boolean, what: string, status: number, body: string): void {
  if (!ok || status !== 200) throw new Error(`${what}: answered ${status} ${body.slice(0, 300)}`);
}

/**
 * The main configuration: one endpoint per row. `relayPort` is the HTTP server the relay row
 * forwards to (it answers `{"relayed":true}`).
 */
export function mainConfig(relayPort: number): BenchConfig {
  const dir = folder();
  const rest = [
    'rest:',
    endpoint('/api/echo/{id}', 'bench.echo'),
    endpoint('/api/flow/{id}', 'http.flow.adapter', ", flow: 'three-noop'"),
    endpoint('/api/fork/{id}', 'http.flow.adapter', ", flow: 'fork-join'"),
    endpoint('/api/subflow/{id}', 'http.flow.adapter', ", flow: 'parent'"),
    endpoint('/api/decision/{id}', 'http.flow.adapter', ", flow: 'decision'"),
    endpoint('/api/upload', 'bench.upload', ', upload: true'),
    // Mercury 4.11.10 skips an http:// target without url_rewrite (its docs call it optional): an
    // identity rewrite on both sides.
    endpoint(
      '/api/relay/{id}',
      `http://127.0.0.1:${relayPort}`,
      ", url_rewrite: ['/api/relay', '/api/relay']",
    ),
  ];
  const config = write(dir, rest.join('\n'));
  const uploadScript = join(dir, 'upload.lua');
  writeFileSync(uploadScript, uploadLua());
  config.rows = [
    {
      id: 'echo',
      what: 'an echo function (the request as JSON)',
      path: '/api/echo/42?q=1',
      check: (s, b) => expect(json(b).method === 'GET' && json(b).url === '/api/echo/42', 'echo', s, b),
    },
    {
      id: 'flow',
      what: 'a flow of three no.op tasks behind http.flow.adapter',
      path: '/api/flow/42',
      check: (s, b) => expect(String(json(b).id) === '42', 'flow', s, b),
    },
    {
      id: 'static',
      what: `static content (a ${staticBytes / 1024} KiB HTML file)`,
      path: '/index.html',
      check: (s, b) => expect(b.length === staticBytes, 'static', s, b),
    },
    {
      id: 'upload',
      what: `multipart upload of a ${uploadBytes / 1024} KiB file, read to its end`,
      path: '/api/upload',
      script: uploadScript,
      check: (s, b) => expect(json(b).size === uploadBytes, 'upload', s, b),
    },
    {
      id: 'relay',
      what: 'relay to an http:// target (a bare node:http server on the load CPU)',
      path: '/api/relay/42',
      check: (s, b) => expect(json(b).relayed === true, 'relay', s, b),
    },
    {
      id: 'fork-join',
      what: 'a flow with a fork of two no.op branches and a join',
      path: '/api/fork/42',
      check: (s, b) => expect(String(json(b).left) === '42' && String(json(b).right) === '42', 'fork', s, b),
    },
    {
      id: 'sub-flow',
      what: 'a flow calling a sub-flow (flow://child), then a no.op',
      path: '/api/subflow/42',
      check: (s, b) => expect(String((json(b).child as { id?: unknown })?.id) === '42', 'sub-flow', s, b),
    },
    {
      id: 'decision',
      what: 'a flow with a boolean decision between two no.op tasks',
      path: '/api/decision/42',
      check: (s, b) => expect(json(b).answer === 'yes', 'decision', s, b),
    },
  ];
  return config;
}

/**
 * 200 endpoints with two path variables each (the spec's routing row), the echo function behind
 * them, the request to the last one. Its own configuration: Mercury matches a URL with path
 * variables by trying its patterns in turn, so these 200 would slow every other row.
 */
export function routesConfig(): BenchConfig {
  const dir = folder();
  const rest = ['rest:'];
  for (let i = 0; i < 200; i++) rest.push(endpoint(`/api/v1/resource${i}/{id}/items/{itemid}`, 'bench.echo'));
  const config = write(dir, rest.join('\n'));
  config.rows = [
    {
      id: '200-endpoints',
      what: 'the echo function behind a 200-endpoint rest.yaml (two path variables and a query)',
      path: '/api/v1/resource199/7/items/9?q=1',
      check: (s, b) =>
        expect((json(b).path_parameters as { itemid?: string })?.itemid === '9', '200-endpoints', s, b),
    },
  ];
  return config;
}

function folder(): string {
  return mkdtempSync(join(tmpdir(), 'mercury-bench-'));
}

function write(dir: string, restYaml: string): BenchConfig {
  mkdirSync(join(dir, 'flows'));
  mkdirSync(join(dir, 'static'));
  const names = Object.keys(flows);
  for (const name of names) writeFileSync(join(dir, 'flows', `${name}.yml`), `${flows[name]}\n`);
  writeFileSync(
    join(dir, 'flows.yaml'),
    `location: 'file:${join(dir, 'flows')}/'\nflows: [${names.map((n) => `'${n}.yml'`).join(', ')}]\n`,
  );
  writeFileSync(join(dir, 'rest.yaml'), `${restYaml}\n`);
  const html = '<!doctype html><title>bench</title>\n';
  writeFileSync(join(dir, 'static', 'index.html'), html + 'x'.repeat(staticBytes - html.length - 1) + '\n');
  const config: BenchConfig = {
    dir,
    restYaml: `file:${join(dir, 'rest.yaml')}`,
    flowsYaml: `file:${join(dir, 'flows.yaml')}`,
    staticFolder: `file:${join(dir, 'static')}`,
    rows: [],
  };
  writeFileSync(
    join(dir, 'application.yml'),
    [
      'rest.automation: true',
      `yaml.rest.automation: '${config.restYaml}'`,
      `yaml.flow.automation: '${config.flowsYaml}'`,
      `static.html.folder: '${config.staticFolder}'`,
      '',
    ].join('\n'),
  );
  return config;
}

/** One multipart body with one file of `uploadBytes`: what wrk posts and what the answer check sends. */
export function uploadRequest(): { body: string; contentType: string } {
  const body = [
    `--${boundary}`,
    'Content-Disposition: form-data; name="file"; filename="bench.bin"',
    'Content-Type: application/octet-stream',
    '',
    'y'.repeat(uploadBytes),
    `--${boundary}--`,
    '',
  ].join('\r\n');
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

function uploadLua(): string {
  const { body, contentType } = uploadRequest();
  // JSON string escapes (\r, \n, \") are Lua string escapes too.
  return `wrk.method = "POST"\nwrk.headers["Content-Type"] = "${contentType}"\nwrk.body = ${JSON.stringify(body)}\n`;
}
