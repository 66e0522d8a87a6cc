import { createLogger } from '../../main/lib/logger.ts';
import { answerHelpOrVersion, requireSubcommand } from '../../main/lib/cli-kit.ts';
import { VERSION } from '../../main/version.ts';
import { logLevel, UsageError } from './args.ts';
import { runOperatorCli, SUBCOMMANDS } from './operator-commands.ts';
import { serve } from './serve-command.ts';
import { USAGE } from './usage.ts';
import { CloudError } from '../errors.ts';
import { DatabaseUnreachable } from '../db/unreachable.ts';

/**
 * `gatehouse-cloud`: serve and the operator commands. cloud/cli.ts runs it for the process; tests run it in
 * their own process where the process boundary is not what they test. Exit codes: 0 ok, 1 failure, 2 bad usage, 3 the database cannot be reached.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [command, ...args] = argv;
  const json = argv.includes('--json');
  const answered = answerHelpOrVersion(command, USAGE, VERSION);
  if (answered !== undefined || command === undefined) return answered ?? 2;
  const levelFlag = argv.indexOf('--log-level');
  try {
    const log = createLogger({
      level: logLevel(levelFlag >= 0 ? argv[levelFlag + 1] : undefined, command === 'serve' ? 'info' : 'warn'),
      json: command === 'serve',
      bindings: { component: 'gatehouse-cloud' },
    });
    if (args.includes('--help') || args.includes('-h')) return (void console.log(USAGE), 0);
    if (command === 'serve') {
      await serve(args, env, log);
      return 0;
    }
    const subs = SUBCOMMANDS[command];
    if (!subs) throw new UsageError(`unknown command '${command}'`);
    requireSubcommand(command, args[0], subs);
    await runOperatorCli(command, args, env, log);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(
        json
          ? `${JSON.stringify({ ok: false, code: 'invalid_request', message: e.message })}\n`
          : `gatehouse-cloud: ${e.message}\nUsage: gatehouse-cloud <command> [options]   (gatehouse-cloud --help)\n`,
      );
      return 2;
    }
    const shape =
      e instanceof CloudError
        ? { code: e.code, message: e.message }
        : { code: 'internal_error', message: (e as Error).message ?? String(e) };
    // A stack helps only with a bug: shown with --log-level debug.
    if (!(e instanceof CloudError) && levelFlag >= 0 && argv[levelFlag + 1] === 'debug')
      process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.stderr.write(
      json ? `${JSON.stringify({ ok: false, ...shape })}\n` : `gatehouse-cloud: ${shape.message} [${shape.code}]\n`,
    );
    return e instanceof DatabaseUnreachable ? 3 : 1;
  }
}
