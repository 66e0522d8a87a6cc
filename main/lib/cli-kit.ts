import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Logger } from './logger.ts';

/**
 * What `gatehouse` and `gatehouse-cloud` share as command lines: the same
 * usage errors, exit codes (0 ok, 1 failure, 2 bad usage), help and version
 * answers and the same way of stopping a service on a signal.
 */

/** Bad usage of a command line: exit code 2, the message and a pointer to --help. */
export class UsageError extends Error {}

type Flags = ParseArgsConfig['options'];

/** parseArgs with the command's flags on top of those every command takes; its complaints become UsageErrors. */
export function parseFlags<C extends Flags, O extends Flags>(args: string[], common: C, options: O) {
  try {
    return parseArgs({ args, options: { ...common, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** The first word after a command must be one of its subcommands. */
export function requireSubcommand(command: string, sub: string | undefined, subs: readonly string[]): void {
  if (subs.includes(sub ?? '')) return;
  const choices = `${subs.slice(0, -1).join(', ')} or ${subs[subs.length - 1]}`;
  throw new UsageError(
    sub === undefined || sub.startsWith('-')
      ? `${command} needs a command first: ${choices}`
      : `unknown ${command} command '${sub}': use ${choices}`,
  );
}

/** Answers help and --version; the exit code when it did, undefined when the command is something else. */
export function answerHelpOrVersion(command: string | undefined, usage: string, version: string): number | undefined {
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    // Asked for: stdout, exit 0. No command at all is bad usage: stderr, exit 2.
    (command ? console.log : console.error)(usage);
    return command ? 0 : 2;
  }
  if (command === '--version') return (void console.log(version), 0);
  return undefined;
}

/**
 * SIGINT/SIGTERM stop the service once. Registered before the addresses are
 * printed: whoever reads them may signal at once, and Node's default for an
 * unhandled signal skips the flush. A stop that does not finish in `graceMs`
 * has not flushed, so it exits 1 rather than claim success.
 */
export function stopOnSignals(stop: () => Promise<void>, log: Logger, graceMs: number): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    const force = setTimeout(() => {
      log.error(`stop did not finish within ${graceMs} ms: exiting without a complete flush`, { signal });
      process.exit(1);
    }, graceMs);
    force.unref();
    void stop().then(
      () => process.exit(0),
      (e) => {
        log.error('stop failed', { error: (e as Error).message });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}
