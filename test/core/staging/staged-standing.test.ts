import { describe, expect, it } from 'vitest';
import type { StagedPayload } from '../../../main/contract/staged.ts';
import { deskView } from '../../../main/core/staging/staged-standing.ts';

// Made at run time so the repository holds no string a secret scanner would flag.
const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;

describe('deskView', () => {
  it("masks a write's arguments and result for a person's eyes, once per stored record, never changing the record", () => {
    const item = {
      id: 'stg_x',
      status: 'pending',
      payload: { title: 'hello', note: `use ${token}` },
      result: { echoed: token },
    } as unknown as StagedPayload;
    const first = deskView(item, null);
    expect(JSON.stringify(first)).not.toContain(token);
    expect(first.payload).toMatchObject({ title: 'hello' });
    // the stored record keeps its values (the apply needs them)
    expect(JSON.stringify(item)).toContain(token);
    // listed again: the same masked objects, not a second scan
    const again = deskView(item, { block: 'token_revoked', reason: 'r' });
    expect(again.payload).toBe(first.payload);
    expect(again.result).toBe(first.result);
    expect(again.blocked).toBe('token_revoked');
    // a new record (a decision stores one) is masked anew
    const decided = { ...item, result: { echoed: `again ${token}` } } as StagedPayload;
    const third = deskView(decided, null);
    expect(third.payload).toBe(first.payload);
    expect(third.result).not.toBe(first.result);
    expect(JSON.stringify(third)).not.toContain(token);
  });
});
