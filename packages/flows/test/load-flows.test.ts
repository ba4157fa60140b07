import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { type FlowLoaderOptions, loadFlows } from '../src/index.ts';

function flowYaml(id: string, extra = ''): string {
  return `flow:
  id: '${id}'
  description: 'flow ${id}'
  ttl: 5s
first.task: 'answer'
tasks:
  - name: 'answer'
    process: 'no.op'
    description: 'answer'
    execution: end
    input: []
    output: ['text(${id}) -> output.body.from'${extra}]
`;
}

/** `${name}`, written so that it is plainly not a template literal. */
function ref(name: string): string {
  return `$${'{'}${name}}`;
}

function files(entries: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'flows-load-'));
  for (const [path, content] of Object.entries(entries)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

function load(configFolder: string, options: Partial<FlowLoaderOptions> = {}) {
  const lines: string[] = [];
  const log = {
    info: (m: string) => lines.push(`INFO ${m}`),
    warn: (m: string) => lines.push(`WARN ${m}`),
    error: (m: string) => lines.push(`ERROR ${m}`),
  };
  const result = loadFlows({ configFolder, env: {}, log, ...options });
  return { ...result, lines };
}

describe('loadFlows', () => {
  it('loads classpath:/flows.yaml by default, sorted and de-duplicated, skipping names without .yml/.yaml', () => {
    const root = files({
      'flows.yaml': "flows: ['b.yml', 'a.yaml', 'b.yml', 'notes.txt']\n",
      'flows/a.yaml': flowYaml('alpha'),
      'flows/b.yml': flowYaml('beta'),
    });
    const { flows, lines, problems } = load(root);
    assert.deepEqual([...flows.keys()], ['alpha', 'beta']);
    assert.deepEqual(problems, []);
    assert.deepEqual(lines, [
      'INFO Loading event scripts from classpath:/flows.yaml',
      'ERROR Ignored notes.txt because it does not have .yml or .yaml file extension',
      'INFO Parsing a.yaml',
      'INFO Parsing b.yml',
      'INFO Loaded alpha',
      'INFO Loaded beta',
      'INFO Event scripts deployed: 2',
    ]);
  });

  it('reads several comma-separated indexes from the property, each with its own location; a missing index is a warning', () => {
    const root = files({
      'main.yaml': "flows: ['one.yml']\n",
      'more/index.yml': "location: 'classpath:/more-flows/'\nflows: ['two.yml']\n",
      'flows/one.yml': flowYaml('one'),
      'more-flows/two.yml': flowYaml('two'),
    });
    const { flows, problems } = load(root, {
      property: 'classpath:/none.yaml, classpath:/main.yaml,classpath:/more/index.yaml',
    });
    assert.deepEqual([...flows.keys()], ['one', 'two']);
    assert.deepEqual(problems, [
      {
        kind: 'index',
        file: 'classpath:/none.yaml',
        message: 'Unable to load Event Scripts from classpath:/none.yaml - classpath:/none.yaml not found',
      },
    ]);
  });

  it('YAML_FLOW_AUTOMATION overrides the property; file: locations read the file system', () => {
    const elsewhere = files({});
    const flowsDir = files({ 'env-flow.yml': flowYaml('from-env') });
    writeFileSync(join(elsewhere, 'index.yaml'), `location: 'file:${flowsDir}/'\nflows: ['env-flow.yml']\n`);
    const { flows } = load(files({}), {
      env: { YAML_FLOW_AUTOMATION: `file:${elsewhere}/index.yaml` },
      property: 'classpath:/ignored.yaml',
    });
    assert.deepEqual([...flows.keys()], ['from-env']);
  });

  it('keeps the first flow of an id, logs refused flows and dropped tasks, never throws', () => {
    const root = files({
      'flows.yaml': "flows: ['a.yml', 'b.yml', 'broken.yml', 'bad-task.yml', 'missing.yml']\n",
      'flows/a.yml': flowYaml('same'),
      'flows/b.yml': flowYaml('same'),
      'flows/broken.yml': 'flow: [unclosed\n',
      'flows/bad-task.yml': flowYaml('bad-task', ", 'text(x) -> model.cid'"),
    });
    const { flows, problems } = load(root);
    assert.deepEqual([...flows.keys()], ['same', 'bad-task']);
    const byFile = Object.fromEntries(problems.map((p) => [p.file, p]));
    assert.equal(byFile['b.yml']!.message, "Unable to parse b.yml - Flow 'same' already exists");
    assert.equal(byFile['b.yml']!.flow, 'same');
    assert.match(byFile['broken.yml']!.message, /^Unable to parse broken\.yml - /);
    assert.equal(
      byFile['missing.yml']!.message,
      'Unable to parse missing.yml - classpath:/flows/missing.yml not found',
    );
    assert.deepEqual(byFile['bad-task.yml'], {
      kind: 'task',
      file: 'bad-task.yml',
      task: 'answer',
      message:
        "Skip invalid task (output) answer in bad-task.yml that overwrites the reserved state-machine key 'model.cid' - text(x) -> model.cid",
    });
    // the flow whose only end task was dropped still loads (Mercury), without the task
    assert.equal(flows.get('bad-task')!.tasks.size, 0);
  });

  it('finds a .yml listed as .yaml (and back), resolves $NAME references from env, properties, then the default', () => {
    const root = files({
      'flows.yml': "flows: ['vars.yaml']\n",
      'flows/vars.yml': flowYaml(
        'vars',
        `, 'text(${ref('FROM_ENV')}) -> output.body.a', 'text(${ref('from.props')}) -> output.body.b', 'text(${ref('NONE:fallback')}) -> output.body.c'`,
      ),
    });
    const { flows } = load(root, {
      env: { FROM_ENV: 'env-value' },
      config: (k) => (k === 'from.props' ? 'prop-value' : undefined),
    });
    const lines = flows
      .get('vars')!
      .tasks.get('answer')!
      .outputMappings.map((m) => m.text);
    assert.deepEqual(lines.slice(1), [
      'text(env-value) -> output.body.a',
      'text(prop-value) -> output.body.b',
      'text(fallback) -> output.body.c',
    ]);
  });
});
