import { describe, expect, it } from 'vitest';
import { PRINCIPALS, consoleSession, tokenPrincipal } from '../../../main/contract/principal.ts';
import { Auditor } from '../../../main/core/calls/auditor.ts';
import type { StatsRecorder } from '../../../main/core/calls/stats.ts';
import { MemoryAudit } from '../../helpers/core.ts';

// Who acted is one shape (a Principal plus what only the moment knows); the entry's columns come from it.
function auditor() {
  const sink = new MemoryAudit();
  const stats = { count: () => undefined } as unknown as StatsRecorder;
  return { sink, auditor: new Auditor(sink, stats, { now: () => Date.parse('2026-11-26T12:00:00Z') }, () => 'local') };
}
const facts = { tool: 'pages_update', write: true, result: 'confirmed' as const };

describe('Auditor.record: who acted', () => {
  it('derives the token and user columns from a token principal', () => {
    const { auditor: a } = auditor();
    const p = tokenPrincipal({ id: 'tok_1', preview: 'gth_…abcd' }, { id: 'u_bob', login: 'bob' }, 'mcp');
    expect(a.record(facts, { principal: p, request_id: 'req_1', client: 'cursor/1' })).toMatchObject({
      token_id: 'tok_1',
      token_preview: 'gth_…abcd',
      user_id: 'u_bob',
      client: 'cursor/1',
      request_id: 'req_1',
      principal: p,
    });
  });

  it('names a person by their principal, and keeps the user the entry is about', () => {
    const { auditor: a } = auditor();
    const e = a.record(facts, { principal: consoleSession('ses_0123456789ab'), user_id: 'u_bob' });
    expect(e).toMatchObject({
      token_id: null,
      token_preview: null,
      user_id: 'u_bob',
      client: 'console (ses_0123456789ab)',
      request_id: null,
    });
  });

  it('gives a service job no token, and a client given explicitly wins over the label', () => {
    const { auditor: a } = auditor();
    expect(
      a.record(
        { ...facts, result: 'expired' },
        { principal: PRINCIPALS.stagedExpiry, user_id: 'u_bob', client: 'claude-ai/1.0' },
      ),
    ).toMatchObject({
      token_id: null,
      user_id: 'u_bob',
      client: 'claude-ai/1.0',
      principal: PRINCIPALS.stagedExpiry,
    });
    expect(a.record(facts, { principal: null })).toMatchObject({
      token_id: null,
      user_id: null,
      client: null,
      principal: null,
    });
  });
});
