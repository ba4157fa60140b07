/**
 * A REST application whose flows end at the gateway (the REST engine's outbound functions), for
 * the bridge tests (REST_CONFIG_FOLDER):
 *   POST /api/news     → gatehouse.event.publish: the request body is the CloudEvent, the caller's
 *                        Authorization header goes along for SUBMISSION_CHECK; the flow answers 202
 *   POST /api/answer   → kafka.notification to the response topic FLOW_RESPONSE_TOPIC with the proxy's
 *                        correlation id (?correlation) and status 201: the answer of a proxy
 *                        endpoint with `response_from: kafka`; the flow itself answers 202
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
  news: oneTask(
    'news',
    'gatehouse.event.publish',
    ['input.body -> event', 'input.header.authorization -> authorization'],
    ['result -> output.body', 'int(202) -> output.status'],
  ),
  answer: oneTask(
    'answer',
    'kafka.notification',
    [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the flow loader resolves ${…} from the environment
      'text(${FLOW_RESPONSE_TOPIC}) -> topic',
      'input.query.correlation -> headers.gw-correlation',
      'text(201) -> headers.gw-response-code',
      'input.body -> body.echo',
      'text(answered by a flow) -> body.by',
    ],
    ['text(waiting for the response) -> output.body.message', 'int(202) -> output.status'],
  ),
};

/** The application's folder, in the temporary directory. */
export function flowBridgeApp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flow-bridge-'));
  const ids = Object.keys(flows);
  mkdirSync(join(dir, 'flows'));
  writeFileSync(join(dir, 'application.yml'), 'rest.automation: true\n');
  writeFileSync(
    join(dir, 'rest.yaml'),
    `rest:\n${ids.map((id) => `  - { service: http.flow.adapter, flow: ${id}, methods: [POST], url: /api/${id}, timeout: 15s }`).join('\n')}\n`,
  );
  writeFileSync(
    join(dir, 'flows.yaml'),
    `location: "classpath:/flows/"\nflows:\n${ids.map((id) => `  - "${id}.yml"`).join('\n')}\n`,
  );
  for (const id of ids) writeFileSync(join(dir, 'flows', `${id}.yml`), flows[id]!);
  return dir;
}
