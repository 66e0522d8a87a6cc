import { describe, expect, it } from 'vitest';
import { sbplString, seatbeltProfile } from '../../../../main/plugins/upstream/sandbox/seatbelt-profile.ts';

// No macOS here: the profile is checked as the text sandbox-exec would be given.
const plan = {
  readOnly: ['/opt/homebrew/Cellar/node/22.12.0', '/Users/ana/.npm/_npx/abc/node_modules'],
  read: ['/Users/ana/docs'],
  write: ['/Users/ana/notes'],
  privateDirs: ['/Users/ana/Library/Application Support/Gatehouse/sandbox/fs/home'],
  proxyPort: null,
};

describe('the macOS Seatbelt profile', () => {
  it('denies by default, reads only an allowlist, writes only the grants and its own folders', () => {
    const p = seatbeltProfile(plan);
    expect(p.startsWith('(version 1)\n(deny default)\n')).toBe(true);
    const reads = p.slice(p.indexOf('(allow file-read*'), p.indexOf('(allow file-write*'));
    const writes = p.slice(p.indexOf('(allow file-write*'));
    for (const r of [...plan.readOnly, ...plan.read, ...plan.write, '/usr', '/System'])
      expect(reads).toContain(`(subpath "${r}")`);
    expect(writes).toContain('(subpath "/Users/ana/notes")');
    expect(writes).toContain(`(subpath "${plan.privateDirs[0]}")`);
    expect(writes).not.toContain('/Users/ana/docs');
    expect(writes).not.toContain('/usr');
    // Nothing of HOME as such: ~/.ssh and the data dir are denied without being named.
    expect(p).not.toMatch(/\(subpath "\/Users\/ana"\)/);
    expect(p).not.toContain('.ssh');
    expect(p).not.toContain('(allow file-read* (subpath "/"))');
  });

  it('has no network without a grant, and only its own proxy port with one', () => {
    expect(seatbeltProfile(plan)).not.toContain('network-outbound');
    const p = seatbeltProfile({ ...plan, proxyPort: 53127 });
    expect(p.match(/network/g)).toHaveLength(1);
    expect(p).toContain('(allow network-outbound (remote tcp "localhost:53127"))');
  });

  it('quotes paths so none can end the string and add a rule', () => {
    expect(sbplString('/a "b"\\c')).toBe('"/a \\"b\\"\\\\c"');
    const p = seatbeltProfile({ ...plan, write: ['/tmp/x") (allow default) ("'] });
    expect(p).not.toContain('(allow default)"');
    expect(p).toContain('(subpath "/tmp/x\\") (allow default) (\\"")');
  });
});
