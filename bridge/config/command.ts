import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from '../args.ts';
import { EXIT } from '../usage.ts';
import { claudeMcpAddCommand, CLIENT_SPECS, launchLine } from './clients.ts';
import { ConfigFileError, writeServerEntry } from './write-config.ts';

/**
 * `gatehouse-bridge config`: the launch entry for one MCP client, printed or
 * written into the client's config file.
 */

export interface ConfigIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
  platform: string;
  home: string;
  /** Absolute path of the node binary the client should start. */
  nodePath: string;
  /** Absolute path of bin/gatehouse-bridge.mjs. */
  binPath: string;
}

export async function runConfig(cmd: Extract<Command, { kind: 'config' }>, io: ConfigIo): Promise<number> {
  const spec = CLIENT_SPECS[cmd.client];
  const { command, args } = launchLine(io.nodePath, io.binPath, cmd.bridgeArgs);
  const entry = spec.entry(command, args);
  const file = cmd.configFile ?? spec.path(io.platform, io.env, io.home);

  for (const h of cmd.opts.headers) {
    if (!/\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(h.value)) {
      io.err(`note: the value of --header ${h.name} will be stored in ${spec.label}'s config file as given; for a secret, use --token-keychain or a \${VAR} reference instead\n`);
    }
  }
  if (cmd.opts.tokenEnv) io.err(`note: set ${cmd.opts.tokenEnv} in the environment ${spec.label} gives this server (its "env" entry), not in this file\n`);

  if (!cmd.write) {
    if (cmd.client === 'claude-code') {
      io.out(`${claudeMcpAddCommand(cmd.name, command, args, io.platform)}\n`);
      io.err(`(or run again with --write to add it to ${file})\n`);
    } else {
      io.out(`${JSON.stringify({ [spec.key]: { [cmd.name]: entry } }, null, 2)}\n`);
      io.err(`add this under "${spec.key}" in ${file}, or run again with --write\n`);
    }
    return EXIT.ok;
  }

  try {
    const result = await writeServerEntry(file, spec.key, cmd.name, entry);
    if (!result.changed) io.out(`${file} already starts "${cmd.name}" this way; nothing changed\n`);
    else if (result.created) io.out(`created ${file} with the "${cmd.name}" server\n`);
    else io.out(`${result.replaced ? 'updated' : 'added'} "${cmd.name}" in ${file} (backup: ${result.backup})\n`);
    if (result.changed) io.err(`restart ${spec.label} to pick it up\n`);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ConfigFileError) {
      io.err(`gatehouse-bridge config: ${e.message}\n`);
      return EXIT.configFile;
    }
    throw e;
  }
}

/** Finds bin/gatehouse-bridge.mjs above this module, in the source tree and in dist/ alike. */
export function findBinPath(from = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'bin', 'gatehouse-bridge.mjs');
    if (existsSync(candidate)) return realpathSync(candidate);
    dir = dirname(dir);
  }
  throw new Error('cannot find bin/gatehouse-bridge.mjs next to the bridge code');
}
