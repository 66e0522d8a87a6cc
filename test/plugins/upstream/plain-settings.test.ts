import { describe, expect, it } from 'vitest';
import { isPlainSetting } from '../../../main/plugins/upstream/known-values.ts';

/** Which env values an upstream's answers are masked of (docs/secrets.md, "what an upstream answers"). */
describe('isPlainSetting', () => {
  it('leaves paths, words and numbers under ordinary names readable', () => {
    const plain: Array<[string, string]> = [
      ['NODE_ENV', 'production'],
      ['ALLOWED_DIRS', '/home/me/notes'],
      ['MEMORY_FILE_PATH', '~/memory.jsonl'],
      ['GITHUB_TOOLSETS', 'repos,issues,pull_requests'],
      ['PORT', '8080'],
      ['LOG_LEVEL', 'debug'],
    ];
    for (const [name, value] of plain) expect(isPlainSetting(name, value), `${name}=${value}`).toBe(true);
  });

  it('masks everything under a secret-like name, and any value that is not plainly a setting', () => {
    const masked: Array<[string, string]> = [
      ['API_KEY', 'production'],
      ['DB_PASSWORD', 'hunter'],
      ['GITHUB_PERSONAL_ACCESS_TOKEN', 'abc'],
      ['UPSTREAM', 'sk-live-4f1e9b-never-in-a-file'],
      ['DATABASE_URL', 'postgres://u:pw@db/app'],
      ['CONFIG', 'x7Kq9v2mZ'],
      ['FROM_CLIENT', '${env:USER}'],
    ];
    for (const [name, value] of masked) expect(isPlainSetting(name, value), `${name}=${value}`).toBe(false);
  });
});
