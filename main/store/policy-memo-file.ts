import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DecisionMemoStore } from '../policy/decision-memo.ts';
import { writeFileAtomic } from './atomic-write.ts';

/**
 * `policy-memo.json` in the data dir: the policy decisions the engine made before (main/policy/decision-memo.ts),
 * read once, written whole and atomically. Missing or unreadable reads as nothing (it is only a cache).
 */
export function policyMemoFile(dataDir: string): DecisionMemoStore {
  const file = join(dataDir, 'policy-memo.json');
  return {
    read() {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as unknown;
      } catch {
        return null;
      }
    },
    write: (doc) => writeFileAtomic(file, JSON.stringify(doc), { mode: 0o600 }),
  };
}
