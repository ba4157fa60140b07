/**
 * Two of Mercury's own test flows (fixtures/mercury, unchanged) load without problems and map the
 * values Mercury's FlowTests assert (typeMatchingTest, greetingTest, nullTransportTest, the pluggable-function tests), with `no.op`-like functions
 * standing in for the task (it answers its input).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  applyMappings,
  type CompiledTask,
  type LoadedFlows,
  loadFlows,
  type MappingScope,
} from '../src/index.ts';

// biome-ignore lint/suspicious/noExplicitAny: the answer body is read freely by the assertions
type Body = Record<string, any>;

const fixtures = join(import.meta.dirname, 'fixtures', 'mercury');
const config: Record<string, unknown> = {
  'application.name': 'event-script-test',
  'test.map': { hello: 'world', good: 'day', port: '8100' },
};

function load(): LoadedFlows {
  return loadFlows({
    configFolder: fixtures,
    env: { PATH: '/usr/bin:/bin' },
    config: (k) => config[k],
  });
}

/** Input mapping, the task answering its input (no.op), output mapping. */
function runTask(
  task: CompiledTask,
  input: unknown,
  model: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  // type-matching reads file(text:/tmp/no-such-file): /tmp is a folder its file(...) may use.
  const hooks = { config: (k: string) => config[k], fileFolders: ['/tmp'] };
  const call: MappingScope = { input, model, body: {}, headers: {}, output: {}, hooks };
  applyMappings(task.inputMappings, call);
  const output: Record<string, unknown> = {};
  applyMappings(task.outputMappings, {
    input,
    model,
    result: call.body,
    header: headers,
    status: 201,
    body: {},
    headers: {},
    output,
    hooks,
  });
  return { body: call.body as Record<string, unknown>, headers: call.headers, output };
}

describe("Mercury's test flows, unchanged", () => {
  it('load without a problem', () => {
    const { flows, problems } = load();
    assert.deepEqual(problems, []);
    assert.deepEqual(
      [...flows.keys()],
      ['greetings', 'null-transport', 'arithmetic', 'type-conversion', 'type-matching'],
    );
    assert.deepEqual([...flows.get('greetings')!.tasks.keys()], ['my.greeting.task', 'v1.hello.exception']);
    assert.equal(flows.get('greetings')!.exceptionHandler, 'v1.hello.exception');
  });

  it('type-matching maps what typeMatchingTest asserts', () => {
    const task = load().flows.get('type-matching')!.tasks.get('no.op')!;
    const { output } = runTask(task, {}, {});
    const body = output['body'] as Body;
    const helloWorld = Buffer.from('hello world');
    assert.equal(body['b64'], helloWorld.toString('base64'));
    assert.deepEqual(Buffer.from(body['binary']), helloWorld);
    assert.deepEqual(JSON.parse(body['json']), { text: 'hello world', b64: helloWorld.toString('base64') });
    assert.deepEqual(JSON.parse(Buffer.from(body['bson']).toString()), JSON.parse(body['json']));
    assert.equal(body['substring'], 'hello');
    const source = body['source'];
    assert.equal(source['substring'], 'hello');
    assert.equal(source['substring-2'], 'world');
    assert.equal(source['no-change'], 'hello world');
    assert.equal(source['keep-as-text'], 'hello world');
    assert.deepEqual(Buffer.from(source['binary']), helloWorld);
    assert.deepEqual(Buffer.from(source['bytes']), helloWorld);
    assert.equal(source['text'], 'hello world');
    assert.deepEqual(
      [
        body['positive'],
        body['negative'],
        body['boolean-text'],
        body['boolean-text-true'],
        body['is-null'],
        body['null'],
        body['has-file'],
      ],
      [true, false, false, true, true, true, false],
    );
    assert.deepEqual(
      [body['integer'], body['long'], body['float'], body['double']],
      [100, 101, 100.01, 101.01],
    );
    assert.deepEqual([body['and'], body['or']], [false, true]);
    assert.deepEqual([source['list_size'], source['number_length']], [3, 4]);
    assert.equal(
      output['header'] && (output['header'] as Record<string, string>)['content-type'],
      'application/json',
    );
  });

  it('greetings maps what greetingTest asserts', () => {
    const task = load().flows.get('greetings')!.tasks.get('my.greeting.task')!;
    const input = {
      path_parameter: { user: '12345' },
      query: {},
      header: { accept: 'application/json', 'x-flow-id': 'greetings' },
    };
    const model: Record<string, unknown> = { cid: 'c'.repeat(32), flow: 'greetings', trace: '1001' };
    const { body, headers, output } = runTask(task, input, model, { demo: 'test-header' });
    assert.equal(body['user'], '12345');
    assert.equal(body['user_number'], 12345);
    assert.equal(body['runtime_value1'], 'wonderful day');
    assert.equal(body['runtime_value2'], 'new world');
    assert.equal(body['runtime_value3'], 'keep {this}/{ one } unchanged');
    assert.deepEqual(
      [body['long_number'], body['float_number'], body['double_number']],
      [12345, 12.345, 12.345],
    );
    assert.deepEqual(
      [body['boolean_value'], body['negate_value'], body['double_negate_value']],
      [true, false, true],
    );
    assert.deepEqual([body['none_is_true'], body['none_is_false']], [true, false]);
    assert.ok(body['unique_id1'] && body['unique_id2'] && body['unique_id1'] !== body['unique_id2']);
    assert.equal(body['unique_id3'], body['unique_id2']);
    assert.equal(body['concat_string'], 'a b,c');
    assert.equal(body['path'], '/usr/bin:/bin');
    assert.deepEqual([body['trace_id'], body['flow_id']], ['1001', 'greetings']);
    assert.deepEqual(headers, {
      accept: 'application/json',
      'x-flow-id': 'greetings',
      user: '12345',
      demo: 'ok',
    });
    // output: 201 from the function's status (text(20000) refused), its headers, the model and config maps
    assert.equal(output['status'], 201);
    assert.deepEqual(output['header'], { demo: 'test-header', 'x-demo': 'test-header' });
    const out = output['body'] as Record<string, unknown>;
    assert.deepEqual(out['map1'], { hello: 'world', good: 'day', port: '8100' });
    assert.deepEqual(out['map2'], { direction: 'right', test: 'message' });
    assert.equal(out['name'], 'event-script-test');
    assert.equal(out['positive'], true);
    assert.equal(out['cid'], 'c'.repeat(32));
  });

  it('null-transport maps what nullTransportTest asserts', () => {
    const task = load().flows.get('null-transport')!.tasks.get('no.op')!;
    const { output } = runTask(task, { body: { number: null, hello: 'world' } }, {});
    assert.deepEqual(output['body'], {
      number: null,
      hello: 'world',
      number2: null,
      null_is_true: true,
      null_is_false: false,
      number3: null,
    });
  });

  it('arithmetic maps what shouldHandleArithmeticPluggableFunction asserts', () => {
    const task = load().flows.get('arithmetic')!.tasks.get('my.arithmetic.task')!;
    assert.deepEqual(runTask(task, {}, {}).output['body'], {
      sum: 11,
      difference: 1,
      product: 12,
      quotient: 3,
      incremented: 7,
      decremented: 5,
    });
  });

  it('type-conversion maps what shouldHandleConversionTypesPluggableFunction asserts', () => {
    const before = Date.now();
    const task = load().flows.get('type-conversion')!.tasks.get('my.types.task')!;
    const body = runTask(task, {}, {}).output['body'] as Body;
    assert.deepEqual(
      [body['string'], body['integer'], body['integer_convert'], body['float'], body['float_convert']],
      ['Hello', 256, 256, 128.5, 128.5],
    );
    // 9223372036854775807 has no exact JavaScript number: both give the nearest one, as equal as in Mercury
    assert.deepEqual([body['long'], body['long_convert']], [Number(2n ** 63n - 1n), Number(2n ** 63n - 1n)]);
    assert.deepEqual([body['double'], body['double_convert']], [256.75, 256.75]);
    assert.deepEqual(
      [body['bool_true'], body['bool_false'], body['bool_convert'], body['and'], body['or'], body['not']],
      [true, false, true, false, true, true],
    );
    assert.deepEqual([body['positive_ternary'], body['negative_ternary']], ['Hello', ' World!']);
    assert.deepEqual([body['positive_eq'], body['negative_eq']], [true, false]);
    assert.deepEqual(
      [
        body['greater_than_positive'],
        body['greater_than_negative'],
        body['less_than_positive'],
        body['less_than_negative'],
      ],
      [true, false, true, false],
    );
    assert.deepEqual(
      [body['substring_one'], body['substring_two'], body['concat']],
      ['World!', 'World', 'Hello World!'],
    );
    assert.equal(Buffer.from(body['to_b64_bytes']).toString(), 'Hello');
    assert.equal(body['to_bytestring'], 'SGVsbG8=');
    assert.deepEqual([body['isNull'], body['isNotNull']], [true, true]);
    assert.match(body['uuid'], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.match(body['currentTime'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?(Z|[+-]\d\d:\d\d)\[.+\]$/);
    assert.deepEqual([body['arr_length'], body['str_length']], [5, 5]);
    assert.match(body['iso'], /^\d{4}-\d\d-\d\dT.*Z$/);
    assert.match(body['default_datetime'], /^\d{4}-\d\d-\d\dT.*Z$/);
    assert.ok(typeof body['ms'] === 'number' && body['ms'] >= before && body['ms'] <= Date.now());
    assert.match(body['local'], /^\d{4}-\d\d-\d\d \d\d:\d\d/);
  });
});
