import { describe, expect, it } from 'vitest';
import {
  ConsoleSessions,
  LOGIN_LINK_TTL_MS,
  MAX_LOGIN_LINKS,
  MAX_SESSIONS,
  SESSION_TTL_MS,
} from '../../../main/core/identity/console-sessions.ts';
import { TestClock } from '../../helpers/service.ts';

// Console login links and sessions are pruned and bounded.

describe('console sessions', () => {
  it('a login code works once, within its lifetime; a session lives its lifetime', () => {
    const clock = new TestClock(1_000_000);
    const s = new ConsoleSessions(clock);
    const code = s.issueLoginCode();
    const first = s.redeem(code)!;
    expect(first.public_id).toMatch(/^ses_[0-9a-f]{12}$/);
    expect(first.public_id).not.toContain(first.sid);
    expect(s.redeem(code)).toBeNull();
    expect(s.check(first.sid)).toBe(first.public_id);
    const late = s.issueLoginCode();
    clock.advance(LOGIN_LINK_TTL_MS);
    expect(s.redeem(late)).toBeNull();
    clock.advance(SESSION_TTL_MS);
    expect(s.check(first.sid)).toBeNull();
    expect(s.check(undefined)).toBeNull();
    expect(s.check('x'.repeat(10_000))).toBeNull();
  });

  it('expired links and sessions are pruned, and a flood keeps at most the bound (the oldest go)', () => {
    const clock = new TestClock(1_000_000);
    const s = new ConsoleSessions(clock);
    const codes = Array.from({ length: 1000 }, () => s.issueLoginCode());
    expect(s.size().links).toBe(MAX_LOGIN_LINKS);
    expect(s.redeem(codes[0]!)).toBeNull();
    const sessions = codes.slice(-MAX_LOGIN_LINKS).map((c) => s.redeem(c)!);
    expect(sessions.every(Boolean)).toBe(true);
    for (let i = 0; i < MAX_SESSIONS * 3; i++) s.redeem(s.issueLoginCode());
    expect(s.size()).toEqual({ links: 0, sessions: MAX_SESSIONS });
    expect(s.check(sessions[0]!.sid)).toBeNull();
    clock.advance(SESSION_TTL_MS + 1);
    expect(s.size()).toEqual({ links: 0, sessions: 0 });
  });

  it('ends one session by its public id and leaves the others', () => {
    const s = new ConsoleSessions(new TestClock());
    const a = s.redeem(s.issueLoginCode())!;
    const b = s.redeem(s.issueLoginCode())!;
    expect(s.end(a.public_id)).toBe(true);
    expect(s.end(a.public_id)).toBe(false);
    expect(s.check(a.sid)).toBeNull();
    expect(s.check(b.sid)).toBe(b.public_id);
  });
});
