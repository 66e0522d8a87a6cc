import { runCommand, type CommandTable } from './run-command.ts';

// Each command loads only its own code: `serve` needs the whole service, `audit list` a little of it.
const COMMANDS: CommandTable = {
  serve: async () => (await import('./serve-command.ts')).serve,
  tokens: async () => (await import('./admin-commands.ts')).tokens,
  users: async () => (await import('./users-commands.ts')).users,
  settings: async () => (await import('./settings-commands.ts')).settings,
  status: async () => (await import('./admin-commands.ts')).status,
  staged: async () => (await import('./review-commands.ts')).staged,
  audit: async () => (await import('./audit-commands.ts')).audit,
  'console-link': async () => (await import('./review-commands.ts')).consoleLink,
  cloud: async () => (await import('./cloud-commands.ts')).cloud,
  upstreams: async () => (await import('./upstream-commands.ts')).upstreams,
  profiles: async () => (await import('./profile-commands.ts')).profiles,
  policy: async () => (await import('./policy-commands.ts')).policy,
  clients: async () => (await import('./client-commands.ts')).clients,
};

/**
 * The `gatehouse` command: `main(argv)` runs one command and returns its exit code. main/cli.ts calls it for the
 * process (the ES module bundle, dist/cli/gatehouse.mjs); tests call it in their own process
 * (test/cli/cli-harness.ts) where the process boundary is not what they test. The commands a running service
 * answers run first from a CommonJS build of their own (main/cli/remote-main.ts).
 */
export const main = (argv: string[]): Promise<number> => runCommand(argv, COMMANDS);
