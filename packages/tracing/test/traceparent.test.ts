import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatTraceParent,
  isSampled,
  isValidParentId,
  isValidTraceId,
  parseTraceParent,
  sampledFlag,
} from '../src/index.ts';

const traceId = '0af7651916cd43dd8448eb211c80319c';
const parentId = 'b7ad6b7169203331';
const valid = `00-${traceId}-${parentId}-01`;

describe('parseTraceParent', () => {
  it('parses version 00', () => {
    assert.deepEqual(parseTraceParent(valid), { version: '00', traceId, parentId, traceFlags: 1 });
    assert.equal(parseTraceParent(`00-${traceId}-${parentId}-00`)?.traceFlags, 0);
  });

  it('keeps every flag bit of version 00 and reads sampled from bit 0 only', () => {
    const tp = parseTraceParent(`00-${traceId}-${parentId}-09`)!;
    assert.equal(tp.traceFlags, 0x09);
    assert.equal(isSampled(tp), true);
    assert.equal(isSampled(parseTraceParent(`00-${traceId}-${parentId}-02`)!), false);
    assert.equal(sampledFlag, 1);
  });

  it('ignores surrounding spaces and tabs', () => {
    for (const text of [` ${valid}`, `\t${valid}`, `${valid} `, `\t ${valid} \t`]) {
      assert.equal(parseTraceParent(text)?.traceId, traceId, JSON.stringify(text));
    }
  });

  it('rejects all-zero trace and parent ids', () => {
    assert.equal(parseTraceParent(`00-${'0'.repeat(32)}-${parentId}-01`), undefined);
    assert.equal(parseTraceParent(`00-${traceId}-${'0'.repeat(16)}-01`), undefined);
  });

  it('rejects wrong lengths of every field', () => {
    for (const text of [
      `0-${traceId}-${parentId}-01`,
      `000-${traceId}-${parentId}-01`,
      `00-${traceId}1-${parentId}-01`,
      `00-${traceId.slice(1)}-${parentId}-01`,
      `00-${traceId}-${parentId}1-01`,
      `00-${traceId}-${parentId.slice(1)}-01`,
      `00-${traceId}-${parentId}-1`,
      `00-${traceId}-${parentId}-001`,
      '',
    ]) {
      assert.equal(parseTraceParent(text), undefined, text);
    }
  });

  it('rejects upper-case hex and other characters', () => {
    for (const text of [
      `00-${traceId.toUpperCase()}-${parentId}-01`,
      `00-${traceId}-${parentId.toUpperCase()}-01`,
      `00-${traceId}-${parentId}-0A`,
      `0A-${traceId}-${parentId}-01`,
      `00-.${traceId.slice(1)}-${parentId}-01`,
      `00-${traceId}-${parentId}-.0`,
      `00-${traceId}-${parentId}-0.`,
      `.0-${traceId}-${parentId}-01`,
      `00_${traceId}_${parentId}_01`,
    ]) {
      assert.equal(parseTraceParent(text), undefined, text);
    }
  });

  it('rejects version 00 with anything after the flags', () => {
    assert.equal(parseTraceParent(`${valid}.`), undefined);
    assert.equal(parseTraceParent(`${valid}-what-the-future-will-be-like`), undefined);
  });

  it('rejects version ff', () => {
    assert.equal(parseTraceParent(`ff-${traceId}-${parentId}-01`), undefined);
    assert.equal(parseTraceParent(`ff-${traceId}-${parentId}-01-more`), undefined);
  });

  it('parses a higher version by the forward-compatibility rules, keeping only the sampled flag', () => {
    assert.deepEqual(parseTraceParent(`cc-${traceId}-${parentId}-01`), {
      version: 'cc',
      traceId,
      parentId,
      traceFlags: 1,
    });
    assert.equal(
      parseTraceParent(`cc-${traceId}-${parentId}-01-what-the-future-will-be-like`)?.traceId,
      traceId,
    );
    assert.equal(parseTraceParent(`01-${traceId}-${parentId}-ff-x`)?.traceFlags, 1);
    assert.equal(parseTraceParent(`cc-${traceId}-${parentId}-01.what-the-future-will-be-like`), undefined);
    assert.equal(parseTraceParent(`cc-${traceId}-${parentId}-0`), undefined, 'shorter than 55 characters');
    assert.equal(parseTraceParent(`cc-${'0'.repeat(32)}-${parentId}-01-x`), undefined);
  });

  it('takes a header sent once, and rejects one sent twice', () => {
    assert.equal(parseTraceParent([valid])?.traceId, traceId);
    assert.equal(parseTraceParent([valid, valid]), undefined);
    assert.equal(parseTraceParent(`${valid}, ${valid}`), undefined, 'as node:http joins repeated headers');
    assert.equal(parseTraceParent([]), undefined);
    assert.equal(parseTraceParent(undefined), undefined);
  });
});

describe('formatTraceParent', () => {
  it('writes version 00 with two-digit flags', () => {
    assert.equal(formatTraceParent({ traceId, parentId, traceFlags: 1 }), valid);
    assert.equal(formatTraceParent({ traceId, parentId, traceFlags: 0 }), `00-${traceId}-${parentId}-00`);
    assert.equal(formatTraceParent({ traceId, parentId, traceFlags: 0xab }), `00-${traceId}-${parentId}-ab`);
  });

  it('downgrades a higher version to 00', () => {
    const future = parseTraceParent(`cc-${traceId}-${parentId}-01-extra`)!;
    assert.equal(formatTraceParent(future), valid);
  });

  it('round-trips', () => {
    assert.equal(formatTraceParent(parseTraceParent(valid)!), valid);
  });

  it('refuses invalid ids and flags', () => {
    assert.throws(
      () => formatTraceParent({ traceId: '0'.repeat(32), parentId, traceFlags: 1 }),
      /invalid trace id/,
    );
    assert.throws(() => formatTraceParent({ traceId, parentId: 'XYZ', traceFlags: 1 }), /invalid parent id/);
    assert.throws(() => formatTraceParent({ traceId, parentId, traceFlags: 256 }), /invalid trace flags/);
  });
});

describe('id checks', () => {
  it('accept lower-case hex of the right length that is not all zero', () => {
    assert.equal(isValidTraceId(traceId), true);
    assert.equal(isValidTraceId(traceId.toUpperCase()), false);
    assert.equal(isValidTraceId('0'.repeat(32)), false);
    assert.equal(isValidParentId(parentId), true);
    assert.equal(isValidParentId(`${parentId}0`), false);
    assert.equal(isValidParentId('0'.repeat(16)), false);
  });
});
