import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import type { PlaceOf } from '../../main/contract/client-locations.ts';
import { EVERYTHING } from '../plugins/upstream/upstream-world.ts';

/**
 * A throwaway HOME (and a project folder as the current directory) holding
 * each client's config as people write them: comments, unrelated keys,
 * placeholders, servers that only work in their client, and Cursor's file
 * as a symlink into a dotfiles folder. Only Linux paths (the test machine's).
 */

export const SECRET = 'sk-live-4f1e9b-never-in-a-file';
export const HEADER_SECRET = 'hdr-77a1c0-never-in-a-file';
const node = JSON.stringify(process.execPath);
const everything = JSON.stringify(EVERYTHING);

export interface ClientHome {
  root: string;
  home: string;
  project: string;
  place: PlaceOf;
  files: Record<string, string>;
  /** the same HOME for a child process */
  env: NodeJS.ProcessEnv;
}

export const CURSOR_MCP = `{
  // Cursor: my servers (this comment must survive)
  "mcpServers": {
    "everything": {
      "command": ${node},
      "args": [${everything}, "stdio"],
      "env": { "API_KEY": "${SECRET}", "FROM_CLIENT": "\${env:USER}" }
    },
    "also-everything": { "command": ${node}, "args": [${everything}, "stdio"] },
    "broken": { "command": "/nonexistent/bin/mcp-server-gone" },
    "per-workspace": { "command": "npx", "args": ["-y", "some-server", "\${workspaceFolder}"] },
    "old-sse": { "url": "http://127.0.0.1:9/sse" },
  },
  "unrelated": { "keep": [1, 2, 3] },
}
`;

export const CODEX_TOML = `# Codex settings, with comments
model = "o3"
approval_policy = "on-request"

[mcp_servers.everything]
command = ${node}
args = [${everything}, "stdio"]

[mcp_servers.everything.env]
API_KEY = "${SECRET}"

# needs Codex's own environment: stays
[mcp_servers.github]
command = "github-mcp"
env_vars = ["GITHUB_TOKEN"]

[profiles.fast]
model = "o4-mini"
`;

function files(home: string, project: string): Record<string, string> {
  return {
    [join(home, '.config/Claude/claude_desktop_config.json')]: JSON.stringify(
      {
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
        preferences: { quickEntryShortcut: 'off' },
      },
      null,
      2,
    ),
    [join(home, '.claude.json')]: JSON.stringify(
      {
        numStartups: 42,
        mcpServers: {
          remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { 'X-Api-Key': HEADER_SECRET } },
          expanded: { type: 'stdio', command: 'uvx', args: ['srv', '--root', '${HOME}/data'], env: {} },
        },
        projects: {
          [project]: { allowedTools: [], mcpServers: { localonly: { type: 'stdio', command: 'local-srv' } } },
          '/some/other/project': { mcpServers: { elsewhere: { command: 'x' } } },
        },
      },
      null,
      2,
    ),
    [join(project, '.mcp.json')]: `{"mcpServers": {"proj": {"type": "sse", "url": "https://sse.example.com/sse"}}}\n`,
    [join(home, 'dotfiles/cursor-mcp.json')]: CURSOR_MCP,
    [join(home, '.config/Code/User/mcp.json')]: `{
	// VS Code, tabs and inputs
	"inputs": [{ "type": "promptString", "id": "gh", "description": "GitHub token", "password": true }],
	"servers": {
		"github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": { "Authorization": "Bearer \${input:gh}" } },
		"files": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "\${workspaceFolder}"] },
		"withenvfile": { "type": "stdio", "command": "srv", "envFile": "\${userHome}/.env" }
	}
}
`,
    [join(home, '.codeium/windsurf/mcp_config.json')]: JSON.stringify({
      mcpServers: { linear: { serverUrl: 'https://mcp.linear.app/mcp' }, off: { command: 'x', disabled: true } },
    }),
    [join(home, '.codex/config.toml')]: CODEX_TOML,
    [join(home, '.gemini/settings.json')]: `{
  // Gemini CLI
  "theme": "Default",
  "mcpServers": {
    "stream": { "httpUrl": "https://a.example.com/mcp", "timeout": 5000 },
    "legacy": { "url": "https://b.example.com/sse" },
    "signin": { "httpUrl": "https://c.example.com/mcp", "oauth": { "enabled": true } },
    "relcwd": { "command": "python", "args": ["srv.py"], "cwd": "./tools" }
  }
}
`,
    [join(home, '.config/zed/settings.json')]: `// Zed settings
{
  "theme": "One Dark",
  "context_servers": {
    "old-style": { "command": { "path": "mcp-old", "args": ["--x"], "env": {} }, "settings": {} },
    "new-style": { "source": "custom", "command": "mcp-new", "args": [] },
  },
}
`,
  };
}

/** A fresh home per test file, removed after it. */
export function clientHomes() {
  const roots: string[] = [];
  afterAll(async () => {
    for (const r of roots) await rm(r, { recursive: true, force: true });
  });
  return async (): Promise<ClientHome> => {
    const root = await mkdtemp(join(tmpdir(), 'gatehouse-clients-'));
    roots.push(root);
    const home = join(root, 'home');
    const project = join(root, 'project');
    await mkdir(project, { recursive: true });
    const written = files(home, project);
    for (const [file, text] of Object.entries(written)) {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text, { mode: 0o600 });
    }
    // Dotfiles: ~/.cursor/mcp.json is a link into ~/dotfiles.
    await mkdir(join(home, '.cursor'), { recursive: true });
    await symlink(join(home, 'dotfiles/cursor-mcp.json'), join(home, '.cursor/mcp.json'));
    return {
      root,
      home,
      project,
      place: { platform: 'linux', env: {}, home, cwd: project },
      files: written,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), CODEX_HOME: '', CLAUDE_CONFIG_DIR: '' },
    };
  };
}
