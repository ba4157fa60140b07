import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRfc3339Timestamp } from '../src/index.ts';

describe('isRfc3339Timestamp', () => {
  it('accepts date-times with Z or a numeric offset, fractions and lower-case separators', () => {
    for (const text of [
      '2024-05-01T12:00:00Z',
      '2024-05-01T12:00:00.5+02:00',
      '2018-08-21T09:11:27.614970+00:00',
      '2024-05-01t12:00:00z',
      '2024-02-29T00:00:00-23:59',
      '2016-12-31T23:59:60Z',
    ]) {
      assert.equal(isRfc3339Timestamp(text), true, text);
    }
  });

  it('rejects other forms and impossible dates and times', () => {
    for (const text of [
      '',
      '2024-05-01',
      '2024-05-01T12:00:00',
      '2024-05-01 12:00:00Z',
      '2024-5-1T12:00:00Z',
      '2024-05-01T12:00Z',
      '2024-05-01T12:00:00+0200',
      '2023-02-29T00:00:00Z',
      '2024-04-31T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-00-10T00:00:00Z',
      '2024-05-00T00:00:00Z',
      '2024-05-01T24:00:00Z',
      '2024-05-01T12:60:00Z',
      '2024-05-01T12:00:61Z',
      '2024-05-01T12:00:00+24:00',
      '2024-05-01T12:00:00.Z',
      ' 2024-05-01T12:00:00Z',
    ]) {
      assert.equal(isRfc3339Timestamp(text), false, text);
    }
  });
});
