/**
 * Flows fed hostile requests over HTTP: a request that names a model key, a body key or an output
 * key cannot walk into a prototype (the engine runs in this process, so `({}).polluted` tells),
 * a `"__proto__"` key of a JSON body stays data, and a `file(...)` path built from request data
 * stays inside flow.file.folders, a symbolic link in the folder included.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { configFolder, type RunningEngine, startEngine } from './engine-fixture.ts';

const flow = (id: string, input: string[], output: string[]) => `
flow: { id: "${id}", description: "${id}", ttl: 10s }
first.task: "only"
tasks:
  - name: "only"
    input: [${input.map((l) => JSON.stringify(l)).join(', ')}]
    process: "no.op"
    output: [${output.map((l) => JSON.stringify(l)).join(', ')}]
    description: "${id}"
    execution: end
`;

/** The flows, given the folder file(...) may use and one outside it. */
const flowsOf = (allowed: string, outside: string): Record<string, string> => ({
  'model-key': flow(
    'model-key',
    ['input.body.key -> model.key', 'input.body.value -> model.{model.key}.polluted'],
    ['text(done) -> output.body.result'],
  ),
  'body-key': flow(
    'body-key',
    ['input.body.key -> model.key', 'input.body.value -> {model.key}.polluted'],
    ['text(done) -> output.body.result'],
  ),
  'output-key': flow(
    'output-key',
    ['input.body.key -> model.key', 'input.body.value -> model.value'],
    ['model.value -> output.body.{model.key}.polluted'],
  ),
  'read-key': flow('read-key', ['input.body.key -> model.key'], ['model.{model.key} -> output.body.read']),
  copy: flow('copy', ['input.body -> model.data'], ['model.data -> output.body']),
  'save-file': flow(
    'save-file',
    ['input.body.name -> model.name', 'input.body.text -> model.text'],
    [`model.text -> file(${allowed}/{model.name})`, 'text(saved) -> output.body.result'],
  ),
  'read-file': flow(
    'read-file',
    ['input.body.name -> model.name'],
    [`file(text:${allowed}/{model.name}) -> output.body.content`],
  ),
  'read-fixed-file': flow('read-fixed-file', [], [`file(text:${outside}/secret.txt) -> output.body.content`]),
});

let run: RunningEngine;
let allowed: string;
let outside: string;

before(async () => {
  const ids = Object.keys(flowsOf('', ''));
  const dir = configFolder({
    'rest.yaml': `rest:\n${ids
      .map((id) => `  - { service: http.flow.adapter, flow: ${id}, methods: [POST], url: /api/${id} }`)
      .join('\n')}\n`,
    'flows.yaml': `location: "classpath:/flows/"\nflows:\n${ids.map((id) => `  - "${id}.yml"`).join('\n')}\n`,
  });
  allowed = join(dir, 'allowed');
  outside = join(dir, 'outside');
  mkdirSync(join(dir, 'flows'));
  for (const [id, text] of Object.entries(flowsOf(allowed, outside)))
    writeFileSync(join(dir, 'flows', `${id}.yml`), text);
  writeFileSync(join(dir, 'application.yml'), `rest.automation: true\nflow.file.folders: file:${allowed}\n`);
  mkdirSync(allowed);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'the secret');
  symlinkSync(outside, join(allowed, 'link'));
  symlinkSync(join(outside, 'secret.txt'), join(allowed, 'secret-link.txt'));
  symlinkSync(join(outside, 'created-through-link.txt'), join(allowed, 'dangling.txt'));
  run = await startEngine({ REST_CONFIG_FOLDER: dir, FUNCTIONS_PATH: join(dir, 'none') });
});
after(() => run.stop());

const post = async (path: string, body: string) => {
  const res = await fetch(`${run.base}${path}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('flows fed hostile requests', () => {
  it('refuses a model, body or output key or a read path that walks into a prototype, with 400', async () => {
    for (const key of ['__proto__', 'constructor.prototype', 'a.__proto__', 'list[0].constructor']) {
      for (const id of ['model-key', 'body-key', 'output-key', 'read-key']) {
        const res = await post(`/api/${id}`, JSON.stringify({ key, value: 'yes' }));
        assert.equal(res.status, 400, `${id} ${key}: ${JSON.stringify(res.body)}`);
        assert.match(
          String(res.body['message']),
          /^Path segment '(__proto__|constructor|prototype)' is not allowed - /,
        );
      }
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    const ordinary = await post('/api/model-key', JSON.stringify({ key: 'settings', value: 'yes' }));
    assert.equal(ordinary.status, 200);
  });

  it('keeps a "__proto__" key of a JSON body as data when it is copied into the model', async () => {
    const body = '{"__proto__":{"polluted":"yes"},"a":1}';
    const res = await post('/api/copy', body);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, JSON.parse(body));
    assert.equal(JSON.stringify(res.body), body);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('writes a file(...) target only inside flow.file.folders, through no link', async () => {
    assert.equal((await post('/api/save-file', '{"name":"ok.txt","text":"hello"}')).status, 200);
    assert.equal(readFileSync(join(allowed, 'ok.txt'), 'utf8'), 'hello');
    assert.equal((await post('/api/save-file', '{"name":"sub/dir/ok.txt","text":"deep"}')).status, 200);
    assert.equal(readFileSync(join(allowed, 'sub/dir/ok.txt'), 'utf8'), 'deep');
    for (const name of [
      '../outside/escaped.txt',
      'link/escaped.txt',
      'dangling.txt',
      'link/new/escaped.txt',
    ]) {
      const res = await post('/api/save-file', JSON.stringify({ name, text: 'pwned' }));
      assert.equal(res.status, 400, name);
      assert.match(String(res.body['message']), /is outside flow\.file\.folders/);
    }
    assert.equal(existsSync(join(outside, 'escaped.txt')), false);
    assert.equal(existsSync(join(outside, 'created-through-link.txt')), false);
    assert.equal(existsSync(join(outside, 'new')), false);
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'the secret');
  });

  it('reads a file(...) source only inside flow.file.folders, through no link', async () => {
    const ok = await post('/api/read-file', '{"name":"ok.txt"}');
    assert.deepEqual(ok, { status: 200, body: { content: 'hello' } });
    for (const name of [
      '../outside/secret.txt',
      'link/secret.txt',
      'secret-link.txt',
      '../../../../etc/hostname',
    ]) {
      const res = await post('/api/read-file', JSON.stringify({ name }));
      assert.equal(res.status, 400, name);
      assert.doesNotMatch(JSON.stringify(res.body), /the secret/);
    }
  });

  it('answers 500 for a file(...) path the flow file itself puts outside flow.file.folders', async () => {
    const res = await post('/api/read-fixed-file', '{}');
    assert.equal(res.status, 500);
    assert.match(String(res.body['message']), /is outside flow\.file\.folders/);
    assert.doesNotMatch(JSON.stringify(res.body), /the secret/);
  });
});
