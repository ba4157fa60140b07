/**
 * A REST application whose flows publish (the engine's outbound functions), for the tests of those
 * functions: each endpoint runs a one-task flow whose task takes what the request's JSON body says.
 *   POST /api/kafka    → kafka.notification  (body: topic, key, headers, body, schema)
 *   POST /api/nats     → nats.notification   (body: subject, headers, body)
 * (The bridge and the response_from answer are tested end to end: test-e2e/test/flow-*.test.ts.)
 */
import { configFolder } from '../engine-fixture.ts';

const oneTask = (id: string, process: string, input: string[], output: string[]) => `
flow: { id: "${id}", description: "${id}", ttl: 10s }
first.task: "publish"
tasks:
  - name: "publish"
    input: [${input.map((l) => JSON.stringify(l)).join(', ')}]
    process: "${process}"
    output: [${output.map((l) => JSON.stringify(l)).join(', ')}]
    description: "${id}"
    execution: end
`;

const flows: Record<string, string> = {
  kafka: oneTask(
    'kafka',
    'kafka.notification',
    [
      'input.body.topic -> topic',
      'input.body.key -> key',
      'input.body.headers -> headers',
      'input.header.x-request-note -> headers.x-request-note',
      'input.body.body -> body',
      'input.body.schema -> schema',
    ],
    ['result -> output.body'],
  ),
  nats: oneTask(
    'nats',
    'nats.notification',
    ['input.body.subject -> subject', 'input.body.headers -> headers', 'input.body.body -> body'],
    ['result -> output.body'],
  ),
};

/** The application's folder (REST_CONFIG_FOLDER). */
export function publishingApp(): string {
  const ids = Object.keys(flows);
  return configFolder({
    'application.yml': 'rest.automation: true\n',
    'rest.yaml': `rest:\n${ids
      .map(
        (id) =>
          `  - { service: http.flow.adapter, flow: ${id}, methods: [POST], url: /api/${id}, timeout: 15s }`,
      )
      .join('\n')}\n`,
    'flows.yaml': `location: "classpath:/flows/"\nflows:\n${ids.map((id) => `  - "${id}.yml"`).join('\n')}\n`,
    ...Object.fromEntries(ids.map((id) => [`flows/${id}.yml`, flows[id]!])),
  });
}
