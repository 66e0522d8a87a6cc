#!/usr/bin/env node
import { printable, UsageError } from './cli/output.ts';
import { answerHelpOrVersion, requireSubcommand } from './lib/cli-kit.ts';
import { USAGE } from './cli/usage.ts';
import { VERSION } from './version.ts';

type Command = (args: string[]) => Promise<void>;
// Each command loads only its own code: `serve` needs the whole service, `audit list` a little of it.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./cli/serve-command.ts')).serve,
  tokens: async () => (await import('./cli/admin-commands.ts')).tokens,
  users: async () => (await import('./cli/admin-commands.ts')).users,
  settings: async () => (await import('./cli/admin-commands.ts')).settings,
  status: async () => (await import('./cli/admin-commands.ts')).status,
  staged: async () => (await import('./cli/review-commands.ts')).staged,
  audit: async () => (await import('./cli/review-commands.ts')).audit,
  'console-link': async () => (await import('./cli/review-commands.ts')).consoleLink,
  cloud: async () => (await import('./cli/cloud-commands.ts')).cloud,
  upstreams: async () => (await import('./cli/upstream-commands.ts')).upstreams,
  profiles: async () => (await import('./cli/profile-commands.ts')).profiles,
  policy: async () => (await import('./cli/policy-commands.ts')).policy,
  clients: async () => (await import('./cli/client-commands.ts')).clients,
};
// Checked before anything opens the data dir: a typo must not create a store or wait for the lock.
const SUBCOMMANDS: Record<string, string[]> = {
  tokens: ['create', 'list', 'revoke'],
  users: ['list', 'add', 'set-role'],
  settings: ['get', 'set'],
  staged: ['list', 'show', 'confirm', 'discard', 'settle'],
  audit: ['list', 'export'],
  cloud: ['connect', 'activate', 'deactivate', 'status', 'sync', 'disconnect'],
  upstreams: [
    'add',
    'list',
    'show',
    'remove',
    'enable',
    'disable',
    'test',
    'tools',
    'review',
    'grant',
    'process',
    'recipes',
    'recipe',
    'login',
    'logout',
    'prompts',
  ],
  profiles: ['create', 'list', 'show', 'remove'],
  policy: ['show', 'check', 'set', 'explain'],
  clients: ['list', 'import', 'connect', 'restore'],
};

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const json = argv.includes('--json');
  const answered = answerHelpOrVersion(command, USAGE, VERSION);
  if (answered !== undefined || command === undefined) return answered ?? 2;
  const load = COMMANDS[command];
  try {
    if (!load) throw new UsageError(`unknown command '${command}'`);
    // After `--` come an upstream's own command and arguments, not ours.
    const own = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
    if (own.includes('--help') || own.includes('-h')) return (void console.log(USAGE), 0);
    const subs = SUBCOMMANDS[command];
    if (subs) requireSubcommand(command, args[0], subs);
    await (
      await load()
    )(args);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(
        json
          ? `${JSON.stringify({ ok: false, code: 'invalid_request', message: e.message })}\n`
          : `gatehouse: ${printable(e.message)}\nUsage: gatehouse <command> [options]   (gatehouse --help)\n`,
      );
      return 2;
    }
    // Loaded only on failure: the error family pulls in zod, which --help and --version never need.
    const { toErrorShape } = await import('./core/errors.ts');
    const shape = toErrorShape(e);
    if (shape.code === 'internal_error') process.stderr.write(`${(e as Error).stack ?? e}\n`);
    // An error message may quote client input (a tool name, a label): escaped for the terminal.
    process.stderr.write(
      json
        ? `${JSON.stringify({ ok: false, ...shape })}\n`
        : `gatehouse: ${printable(shape.message)} [${shape.code}]\n`,
    );
    return 1;
  }
}

const code = await main(process.argv.slice(2));
if (process.argv[2] !== 'serve' || code !== 0) process.exitCode = code;
