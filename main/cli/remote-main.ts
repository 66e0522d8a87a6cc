import { consoleLink, staged } from './review-commands.ts';
import { policy } from './policy-commands.ts';
import { status, tokens } from './admin-commands.ts';
import { users } from './users-commands.ts';
import { settings } from './settings-commands.ts';
import { runCommand, type CommandTable } from './run-command.ts';
import { handOverWhatNeedsTheFullBuild, RunElsewhere } from './run-elsewhere.ts';

// The commands whose every subcommand a running service answers with no schema loaded here
// (test/cli/startup.test.ts walks their code for zod). bin/gatehouse.cjs loads this file only for these names.
export const REMOTE: CommandTable = {
  tokens: async () => tokens,
  users: async () => users,
  settings: async () => settings,
  status: async () => status,
  staged: async () => staged,
  'console-link': async () => consoleLink,
  policy: async () => policy,
};

/**
 * The commands a running service answers, built on their own as CommonJS (dist/cli/remote.cjs, main/cli/build.ts),
 * which bin/gatehouse.cjs runs first: with a service running, such a command starts no ES module loader and loads
 * one file, where the ES module bundle loads some fifteen chunks (about 15 ms of a ~65 ms command,
 * docs/performance.md "Start-up"). The same command code as main/cli/main.ts, cut where it would open the data dir
 * itself (main/cli/remote-cuts.ts).
 *
 * Returns the exit code, or undefined when the command is not one of these or no service of this version runs on
 * its data dir (connect throws RunElsewhere, main/cli/connect.ts): then the ES module bundle runs it, from its
 * start, with nothing read, sent or printed here.
 */
export async function remoteMain(argv: string[]): Promise<number | undefined> {
  const [command, ...args] = argv;
  if (command === undefined || !Object.hasOwn(REMOTE, command) || readsBeforeConnecting(command, args))
    return undefined;
  // connect, on its read of runtime.json, hands the command over when no service of this version runs there.
  handOverWhatNeedsTheFullBuild();
  try {
    return await runCommand(argv, REMOTE);
  } catch (e) {
    if (e instanceof RunElsewhere) return undefined;
    throw e;
  }
}

/**
 * `policy check|set FILE` read their input (stdin, a pipe, a file) before they connect: handed over after that, the
 * command would read it again and find it gone. Every other command here connects before it reads, sends or prints.
 */
const readsBeforeConnecting = (command: string, args: string[]): boolean =>
  command === 'policy' && (args[0] === 'check' || args[0] === 'set');
