import { printable, UsageError } from './output.ts';
import { answerHelpOrVersion, requireSubcommand } from '../lib/cli-kit.ts';
import { RunElsewhere } from './run-elsewhere.ts';
import { USAGE } from './usage.ts';
import { VERSION } from '../version.ts';

export type Command = (args: string[]) => Promise<void>;
/** Each command's code, loaded when that command runs. */
export type CommandTable = Record<string, () => Promise<Command>>;

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
 * One `gatehouse` command from `commands`: routing, usage and errors; returns its exit code. The one way both
 * builds of the command run one (main/cli/main.ts, main/cli/remote-main.ts).
 */
export async function runCommand(argv: string[], commands: CommandTable): Promise<number> {
  const [command, ...args] = argv;
  const json = argv.includes('--json');
  const answered = answerHelpOrVersion(command, USAGE, VERSION);
  if (answered !== undefined || command === undefined) return answered ?? 2;
  const load = commands[command];
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
    // Not an error: the command is run by the other build, from its start (main/cli/run-elsewhere.ts).
    if (e instanceof RunElsewhere) throw e;
    if (e instanceof UsageError) {
      process.stderr.write(
        json
          ? `${JSON.stringify({ ok: false, code: 'invalid_request', message: e.message })}\n`
          : `gatehouse: ${printable(e.message)}\nUsage: gatehouse <command> [options]   (gatehouse --help)\n`,
      );
      return 2;
    }
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
