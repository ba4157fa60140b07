import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PositionUnavailableError } from '../src/all.ts';
import {
  compareRecordPositions,
  decodePosition,
  encodePosition,
  kinesisEpoch,
} from '../src/kinesis-record.ts';

const malformed = (err: unknown) => err instanceof PositionUnavailableError && err.reason === 'unknown';

describe('kinesis record positions', () => {
  it('carry the epoch of the stream they were made in, and read back without one as before', () => {
    const epoch = kinesisEpoch(1796012482335);
    assert.match(epoch ?? '', /^[0-9a-f]{8}$/);
    const position = encodePosition({ shardId: 'shardId-000000000000', sequenceNumber: '4963', epoch });
    assert.equal(position, `shardId-000000000000~4963.${epoch}`);
    assert.deepEqual(decodePosition(position), {
      shardId: 'shardId-000000000000',
      sequenceNumber: '4963',
      epoch,
    });
    assert.deepEqual(decodePosition('shardId-000000000000~4963'), {
      shardId: 'shardId-000000000000',
      sequenceNumber: '4963',
      epoch: undefined,
    });
    assert.equal(compareRecordPositions(position, 'shardId-000000000000~4963'), 0, 'the epoch takes no part');
  });

  it('tell streams of the same name created at different times apart, and have none without a time', () => {
    assert.notEqual(kinesisEpoch(1796012482335), kinesisEpoch(1796012483169));
    assert.equal(kinesisEpoch(1796012482335), kinesisEpoch(1796012482335));
    assert.equal(kinesisEpoch(undefined), undefined);
    assert.equal(kinesisEpoch(0), undefined);
  });

  it('refuse what is not a position, also one longer than Kinesis ever makes', () => {
    for (const bad of [
      '',
      'shardId-0',
      'shardId-0~',
      '~42',
      'shardId-0~42.',
      'shardId-0~42.XYZ',
      'shardId-0~4x2',
      `${'s'.repeat(129)}~42`,
      `shardId-0~${'1'.repeat(129)}`,
    ])
      assert.throws(() => decodePosition(bad), malformed, JSON.stringify(bad));
  });
});
