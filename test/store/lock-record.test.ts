import { describe, expect, it } from 'vitest';
import { lockRecordOf } from '../../main/store/lock-file.ts';

describe('lockRecordOf: a lock file read back', () => {
  it('takes a record with only its own fields', () => {
    expect(lockRecordOf({ pid: 42, started: 't', nonce: 'n', owner: 'cli', extra: 1 })).toEqual({
      pid: 42,
      started: 't',
      nonce: 'n',
      owner: 'cli',
    });
    expect(lockRecordOf({ pid: 42, started: 't' })).toEqual({ pid: 42, started: 't' });
  });

  it('refuses anything else, so a stranger or a torn file is never taken for a holder', () => {
    for (const bad of [
      null,
      [],
      'x',
      {},
      { pid: '42', started: 't' },
      { pid: 4.2, started: 't' },
      { pid: 2 ** 60, started: 't' },
      { pid: 42 },
      { pid: 42, started: 1 },
      { pid: 42, started: 't', nonce: 7 },
      { pid: 42, started: 't', owner: 'x'.repeat(41) },
      { pid: 42, started: 't', owner: null },
    ])
      expect(lockRecordOf(bad), JSON.stringify(bad)).toBeNull();
  });
});
