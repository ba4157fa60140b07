/**
 * A REST application whose flows end at the gateway (the REST engine's outbound functions), for
 * the bridge tests (REST_CONFIG_FOLDER):
 *   POST /api/news     → gatehouse.event.publish: the request body is the CloudEvent, the caller's
 *                        Authorization header goes along for SUBMISSION_CHECK; the flow answers 202
 *   POST /api/answer   → kafka.notification to the response topic FLOW_RESPONSE_TOPIC with the proxy's
 *                        correlation id (?correlation) and status 201: the answer of a proxy
 *                        endpoint with `response_from: kafka`; the flow itself answers 202
 */
import { flowAppFolder, oneTaskFlow as oneTask } from '@gatehouse/testkit';

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
  return flowAppFolder('flow-bridge-', flows);
}
