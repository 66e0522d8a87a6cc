import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommand, UsageError } from './args.ts';
import { runBridge } from './run.ts';
import { HELP, EXIT, USAGE_LINE } from './usage.ts';

/**
 * `gatehouse-bridge`: routes to the bridge itself or to `config`, and turns
 * every outcome into an exit code. Nothing but protocol reaches stdout while
 * bridging; --help, --version and config print there because no client is
 * listening then.
 */

export async function main(argv: string[]): Promise<number> {
  let cmd;
  try {
    cmd = parseCommand(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`gatehouse-bridge: ${e.message}\n${USAGE_LINE}\n`);
    return EXIT.usage;
  }
  switch (cmd.kind) {
    case 'help':
      process.stdout.write(HELP);
      return EXIT.ok;
    case 'version':
      process.stdout.write(`${version()}\n`);
      return EXIT.ok;
    case 'config': {
      // Loaded on demand: the bridge's start-up never pays for the config writer.
      const { runConfig, findBinPath } = await import('./config/command.ts');
      return runConfig(cmd, {
        out: (t) => process.stdout.write(t),
        err: (t) => process.stderr.write(t),
        env: process.env,
        platform: process.platform,
        home: homedir(),
        cwd: process.cwd(),
        nodePath: process.execPath,
        binPath: findBinPath(),
      });
    }
    case 'run':
      return runBridge(cmd.opts, { stdin: process.stdin, stdout: process.stdout, env: process.env });
  }
}

function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gatehouse' && pkg.version) return pkg.version;
    } catch {
      // keep looking upwards
    }
  }
  return 'unknown';
}

/** Exits once stdout has drained (on Windows, pipe writes are asynchronous). */
export function exitWhenFlushed(code: number): void {
  process.exitCode = code;
  const exit = () => process.exit(code);
  if (process.stdout.writableLength === 0) return exit();
  process.stdout.once('drain', exit);
  setTimeout(exit, 2000).unref();
}
