/**
 * A REST engine application made of one-task flows, for tests of the engine's outbound functions
 * (its own tests and the end-to-end ones): each flow `<id>` is run by `POST /api/<id>`.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A flow of one task that runs `process` with the given input and output mappings. */
export function oneTaskFlow(id: string, process: string, input: string[], output: string[]): string {
  return `
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
}

/** The application's folder (REST_CONFIG_FOLDER), in the temporary directory: flow texts by id. */
export function flowAppFolder(prefix: string, flows: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
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
