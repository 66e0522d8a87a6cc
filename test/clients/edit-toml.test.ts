import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { requireTableRange, spliceTable, tomlTable, tomlTableRange } from '../../main/clients/edit-toml.ts';

/** The TOML splice: one table and its subtables as a range of text, nothing else touched. */
const DOC = `# top
model = "o3"

[mcp_servers."my server"]
command = "a"
notes = """
[mcp_servers.fake]
not a header
"""

[mcp_servers."my server".env]
K = "v"

# about b
[mcp_servers.b]
command = "b"
`;

describe('edit-toml', () => {
  it('finds a quoted table with its subtable, skipping a header-like line in a multi-line string; the next comment stays with its table', () => {
    const r = tomlTableRange(DOC, ['mcp_servers'], 'my server')!;
    const cut = DOC.slice(0, r.start) + DOC.slice(r.end);
    expect(cut).toBe('# top\nmodel = "o3"\n\n# about b\n[mcp_servers.b]\ncommand = "b"\n');
    expect(tomlTableRange(DOC, ['mcp_servers'], 'fake')).toBeNull();
  });

  it('writes a table that parses back to the entry, with CRLF kept', () => {
    const entry = { url: 'http://127.0.0.1:1/mcp', http_headers: { Authorization: 'Bearer "x"\\y' } };
    const crlf = DOC.replace(/\n/g, '\r\n');
    const r = tomlTableRange(crlf, ['mcp_servers'], 'b')!;
    const text = spliceTable(crlf.slice(0, r.start), r.start, tomlTable(['mcp_servers'], 'gate house', entry, '\r\n'));
    expect(text).not.toMatch(/[^\r]\n/);
    expect((parse(text) as { mcp_servers: Record<string, unknown> }).mcp_servers['gate house']).toEqual(entry);
  });

  it('refuses a server without a table of its own (inline table, dotted keys), naming the file', () => {
    const inline = `[mcp_servers]\nx = { command = "a" }\n`;
    expect(() => requireTableRange(inline, ['mcp_servers'], 'x', '/h/.codex/config.toml')).toThrow(
      /^\/h\/\.codex\/config\.toml: server "x" is not written as its own \[mcp_servers\.x\] table/,
    );
  });
});
