/**
 * A REST application whose flows publish (the engine's outbound functions), for the tests of those
 * functions: each endpoint runs a one-task flow whose task takes what the request's JSON body says.
 *   POST /api/kafka    → kafka.notification  (body: topic, key, headers, body, schema)
 *   POST /api/nats     → nats.notification   (body: subject, headers, body)
 * (The bridge and the response_from answer are tested end to end: test-e2e/test/flow-*.test.ts.)
 */
import { flowAppFolder, oneTaskFlow as oneTask } from '@gatehouse/testkit';

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
  return flowAppFolder('rest-engine-', flows);
}
