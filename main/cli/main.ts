import { printable, UsageError } from './output.ts';
import { answerHelpOrVersion, requireSubcommand } from '../lib/cli-kit.ts';
import { USAGE } from './usage.ts';
import { VERSION } from '../version.ts';

type Command = (args: string[]) => Promise<void>;
// Each command loads only its own code: `serve` needs the whole service, `audit list` a little of it.
const COMMANDS: Record<string, () => Promise<Command>> = {
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

/**
 * The `gatehouse` command's routing, usage and errors: `main(argv)` runs one command and returns its exit code.
 * main/cli.ts calls it for the process; tests call it in their own process (test/cli/cli-harness.ts) where the
 * process boundary is not what they test.
 */
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
    const { toErrorShape } = await import('../core/errors.ts');
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
