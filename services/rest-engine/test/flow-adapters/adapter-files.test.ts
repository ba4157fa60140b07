/**
 * kafka-flow-adapter.yaml and nats-flow-adapter.yaml are checked when the engine is created (the
 * schema and Mercury's rules) and when it starts (the flows must be loaded): any problem stops the
 * start with a message naming the file, the binding and what to fix. No broker is needed for this.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, createLogger, createRegistry } from '@gatehouse/service-kit';
import { createRestEngine } from '../../src/index.ts';
import { adapterFile, fixtureApp } from './kafka-fixture.ts';

const quiet = createLogger({ name: 'test', level: 'silent' });

function engineWith(kafka: string, env: Record<string, string> = {}) {
  return createRestEngine({
    logger: quiet,
    registry: createRegistry(),
    env: {
      REST_CONFIG_FOLDER: fixtureApp,
      REST_SERVER_PORT: '0',
      REST_SERVER_HOST: '127.0.0.1',
      YAML_KAFKA_FLOW_ADAPTER: adapterFile('kafka-flow-adapter.yaml', kafka),
      ...env,
    },
  });
}

function refusal(kafka: string, env: Record<string, string> = {}): string {
  try {
    engineWith(kafka, env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message;
  }
  assert.fail('the engine was created');
}

describe('flow adapter files', () => {
  it('names an unknown key, as the schema does not know it', () => {
    assert.match(
      refusal(`consumer:\n  - topic: t\n    flow: f\n    grup: g\n`),
      /consumer\.0 has an unknown key grup/,
    );
  });

  it('wants exactly one of topic and topic-pattern, and exactly one of flow and flows', () => {
    assert.match(
      refusal(`consumer:\n  - topic: t\n    topic-pattern: 't.*'\n    group: g\n    flow: f\n`),
      /consumer\.0 must set exactly one of topic or topic-pattern/,
    );
    assert.match(
      refusal(`consumer:\n  - topic: t\n    flow: f\n    flows: ['default -> flow://f']\n`),
      /consumer\.0 must set exactly one of flow or flows/,
    );
  });

  it('wants a group for a pattern, no partition with it, and a dead-letter topic the binding does not read', () => {
    assert.match(
      refusal(`consumer:\n  - topic-pattern: 'a\\..*'\n    flow: f\n`),
      /a topic-pattern binding must name its group/,
    );
    assert.match(
      refusal(`consumer:\n  - topic-pattern: 'a\\..*'\n    group: g\n    partition: 1\n    flow: f\n`),
      /partition only with topic/,
    );
    assert.match(
      refusal(`consumer:\n  - topic-pattern: 'a\\..*'\n    group: g\n    flow: f\n    dlq-topic: a.dlq\n`),
      /dlq-topic a\.dlq is read by the binding itself/,
    );
    assert.match(
      refusal(`consumer:\n  - topic-pattern: '(a'\n    group: g\n    flow: f\n`),
      /is no regular expression/,
    );
  });

  it('checks routing rules: their form, one default, valid regexes', () => {
    assert.match(
      refusal(`consumer:\n  - topic: t\n    flows: ['input.header.type(x) -> flow://f']\n`),
      /exactly one 'default -> flow:\/\/<id>' rule/,
    );
    assert.match(
      refusal(
        `consumer:\n  - topic: t\n    flows: ['input.query.x(y) -> flow://f', 'default -> flow://f']\n`,
      ),
      /is not '<selector>\(<matcher>\) -> flow:\/\/<id>'/,
    );
    assert.match(
      refusal(
        `consumer:\n  - topic: t\n    flows: ['input.body.k(regex: [) -> flow://f', 'default -> flow://f']\n`,
      ),
      /has an invalid regex/,
    );
  });

  it('bounds the bindings and their in-flight records', () => {
    const two = `consumer:\n  - topic: a\n    flow: f\n  - topic: b\n    flow: f\n`;
    assert.match(
      refusal(two, { FLOW_ADAPTER_MAX_BINDINGS: '1' }),
      /2 flow adapter bindings, more than flow\.adapter\.max-bindings \(1\)/,
    );
    assert.match(
      refusal(`consumer:\n  - topic: a\n    flow: f\n    max-in-flight: 17\n`),
      /max-in-flight 17 is above flow\.adapter\.max-in-flight \(16\)/,
    );
  });

  it('refuses a start whose bindings name a flow that is not loaded, or when Kafka has no address', async () => {
    const unknownFlow = engineWith(`consumer:\n  - topic: a\n    flow: no-such-flow\n`, {
      KAFKA_BROKERS: '127.0.0.1:9092',
    });
    await assert.rejects(unknownFlow.start(), /kafka:a: flow no-such-flow is not loaded/);
    await unknownFlow.stop();
    const noBrokers = engineWith(`consumer:\n  - topic: a\n    flow: adapter-record-a\n`, {
      KAFKA_BROKERS: '',
    });
    await assert.rejects(noBrokers.start(), /KAFKA_BROKERS: must be set/);
    await noBrokers.stop();
  });

  it('points at a YAML error with its line', () => {
    assert.match(refusal(`consumer:\n  - topic: [a\n`), /kafka-flow-adapter\.yaml:\d+:\d+/);
  });
});
