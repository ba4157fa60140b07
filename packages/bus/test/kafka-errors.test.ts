import assert from 'node:assert/strict';
import { test } from 'node:test';
import kafkajs from 'kafkajs';
import { isRetriableKafkaError, kafkaErrorMessage } from '../src/kafka-errors.ts';

const {
  KafkaJSBrokerNotFound,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
} = kafkajs;

// kafkajs's types declare no constructor argument, but the class takes the message as its first.
const BrokerNotFound = KafkaJSBrokerNotFound as unknown as new (message: string) => Error;

/** A protocol error as kafkajs makes it from a broker's error code. */
function protocolError(type: string, code: number, retriable: boolean): Error {
  return new KafkaJSProtocolError(Object.assign(new Error(type), { type, code, retriable }));
}

test('a broker without a controller yet (Broker -1) and a topic not listed yet are retried', () => {
  assert.equal(isRetriableKafkaError(new BrokerNotFound('Broker -1 not found in the cached metadata')), true);
  const unknownTopic = protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true);
  assert.equal(isRetriableKafkaError(unknownTopic), true);
});

test("kafkajs' own retries running out on what passes with time is retried (a group coordinator loading)", () => {
  const notCoordinator = protocolError('NOT_COORDINATOR', 16, true);
  const exhausted = new KafkaJSNumberOfRetriesExceeded(notCoordinator, { retryCount: 5, retryTime: 2000 });
  assert.equal(exhausted.retriable, false, 'kafkajs marks it non-retriable');
  assert.equal(isRetriableKafkaError(exhausted), true);
  const invalid = protocolError('INVALID_PARTITIONS', 37, false);
  assert.equal(
    isRetriableKafkaError(new KafkaJSNumberOfRetriesExceeded(invalid, { retryCount: 5, retryTime: 2000 })),
    false,
  );
});

test('what does not pass with time fails at once', () => {
  const invalidPartitions = protocolError('INVALID_PARTITIONS', 37, false);
  assert.equal(isRetriableKafkaError(invalidPartitions), false);
  assert.equal(isRetriableKafkaError(new KafkaJSNonRetriableError('no')), false);
  assert.equal(isRetriableKafkaError(new Error('plain')), false);
  assert.equal(isRetriableKafkaError(undefined), false);
});

test('a security setting that fails is not retried, and the message names the setting', () => {
  const { KafkaJSConnectionError } = kafkajs;
  // kafkajs's types declare no constructor argument, but the class takes the message as its first.
  const KafkaJSSASLAuthenticationError = kafkajs.KafkaJSSASLAuthenticationError as unknown as new (
    message: string,
  ) => Error;
  const untrusted = new KafkaJSConnectionError(
    'Connection error: self-signed certificate in certificate chain',
  );
  assert.equal(untrusted.retriable, true, 'kafkajs retries it');
  assert.equal(isRetriableKafkaError(untrusted), false);
  assert.match(kafkaErrorMessage(untrusted), /check KAFKA_SSL_CA_CERTFILE/);
  const clientCertificate = new KafkaJSConnectionError('Connection error: ssl/tls alert certificate unknown');
  assert.match(kafkaErrorMessage(clientCertificate), /check KAFKA_SSL_CERTFILE/);
  const sasl = new KafkaJSSASLAuthenticationError(
    'SASL SCRAM SHA512 authentication failed: invalid credentials',
  );
  assert.equal(isRetriableKafkaError(sasl), false);
  assert.match(kafkaErrorMessage(sasl), /check KAFKA_SASL/);
  assert.equal(kafkaErrorMessage(new Error('plain')), 'plain');
});
