import { describe, expect, it } from 'vitest';
import { setJsoncEntry } from '../../main/clients/edit-jsonc.ts';

/** Taking an entry out and putting one in changes the entry's own lines only. */
describe('edit-jsonc', () => {
  it('the first, a middle and the last entry (no trailing comma) go with their lines and comma', () => {
    const doc = `{\n  "mcpServers": {\n    "a": { "command": "a" },\n    "b": {\n      "command": "b"\n    },\n    "c": { "command": "c" }\n  },\n  "x": 1\n}\n`;
    expect(setJsoncEntry(doc, ['mcpServers'], 'a', undefined)).toBe(
      `{\n  "mcpServers": {\n    "b": {\n      "command": "b"\n    },\n    "c": { "command": "c" }\n  },\n  "x": 1\n}\n`,
    );
    expect(setJsoncEntry(doc, ['mcpServers'], 'b', undefined)).toBe(
      `{\n  "mcpServers": {\n    "a": { "command": "a" },\n    "c": { "command": "c" }\n  },\n  "x": 1\n}\n`,
    );
    expect(setJsoncEntry(doc, ['mcpServers'], 'c', undefined)).toBe(
      `{\n  "mcpServers": {\n    "a": { "command": "a" },\n    "b": {\n      "command": "b"\n    }\n  },\n  "x": 1\n}\n`,
    );
  });

  it('an added entry follows the file: tabs, CRLF, a BOM, comments around it', () => {
    const doc = `\ufeff{\r\n\t// mine\r\n\t"servers": {\r\n\t\t"a": { "type": "stdio", "command": "a" } // a's\r\n\t}\r\n}\r\n`;
    const out = setJsoncEntry(doc, ['servers'], 'gatehouse', { type: 'http', url: 'http://x' });
    expect(
      out.startsWith(`\ufeff{\r\n\t// mine\r\n\t"servers": {\r\n\t\t"a": { "type": "stdio", "command": "a" }`),
    ).toBe(true);
    expect(out).toContain(`\t\t"gatehouse": {\r\n\t\t\t"type": "http",\r\n\t\t\t"url": "http://x"\r\n\t\t}`);
    expect(out).toContain("// a's");
    expect(out.endsWith('\t}\r\n}\r\n')).toBe(true);
  });

  it('a key with dots or slashes is one key (Claude Code local scope: projects["/abs/dir"])', () => {
    const doc = `{"projects": {"/home/a/p.x": {"mcpServers": {"s": {"command": "s"}}}}}`;
    const out = setJsoncEntry(doc, ['projects', '/home/a/p.x', 'mcpServers'], 'gatehouse', { type: 'http' });
    expect(JSON.parse(out).projects['/home/a/p.x'].mcpServers).toEqual({
      s: { command: 's' },
      gatehouse: { type: 'http' },
    });
  });
});
