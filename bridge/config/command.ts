import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bridgeLaunchArgs,
  CLIENT_FORMATS,
  ClientConfigError,
  clientDocument,
  clientEntry,
  claudeMcpAddCommand,
  quotePosix,
  type TokenSource,
} from '../../main/contract/client-config.ts';
import { defaultDataDir } from '../../main/contract/paths.ts';
import type { Command } from '../args.ts';
import { EXIT } from '../usage.ts';
import { CLIENT_FILES } from './clients.ts';
import { ConfigFileError, writeServerEntry } from './write-config.ts';

/**
 * `gatehouse-bridge config`: the launch entry for one MCP client, printed or
 * written into the client's config file. The entry must work when the client
 * starts it: absolute paths, the data dir carried over from the flag or the
 * environment (a client does not pass GATEHOUSE_DATA_DIR on), and a token
 * source the entry really supplies.
 */

export interface ConfigIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
  platform: string;
  home: string;
  cwd: string;
  /** Absolute path of the node binary the client should start. */
  nodePath: string;
  /** Absolute path of bin/gatehouse-bridge.mjs. */
  binPath: string;
}

export async function runConfig(cmd: Extract<Command, { kind: 'config' }>, io: ConfigIo): Promise<number> {
  const format = CLIENT_FORMATS[cmd.client];
  const file = cmd.configFile
    ? resolve(io.cwd, cmd.configFile)
    : CLIENT_FILES[cmd.client](io.platform, io.env, io.home);
  const dataDirGiven = cmd.opts.dataDir ?? (io.env.GATEHOUSE_DATA_DIR || undefined);
  const dataDir = dataDirGiven ? resolve(io.cwd, dataDirGiven) : defaultDataDir(io.platform, io.env, io.home);
  const launch = {
    command: io.nodePath,
    args: bridgeLaunchArgs(io.binPath, { dataDir, defaultDataDir: defaultDataDir(io.platform, io.env, io.home) }),
    platform: io.platform,
  };
  const extra = [...cmd.bridgeArgs, ...(cmd.opts.logFile ? ['--log-file', resolve(io.cwd, cmd.opts.logFile)] : [])];
  const token: TokenSource = cmd.opts.tokenKeychain
    ? { kind: 'keychain', account: cmd.opts.tokenKeychain, vault: cmd.opts.vault }
    : cmd.opts.tokenEnv
      ? {
          kind: 'env',
          variable: cmd.opts.tokenEnv,
          ...(io.env[cmd.opts.tokenEnv]?.trim() ? { value: io.env[cmd.opts.tokenEnv]!.trim() } : {}),
        }
      : { kind: 'none' };

  let entry;
  try {
    entry = clientEntry(cmd.client, launch, token, extra);
  } catch (e) {
    if (!(e instanceof ClientConfigError) || token.kind !== 'env') throw e;
    io.err(
      `gatehouse-bridge config: ${e.message}. Either set ${token.variable} in this shell and run again (the token is then written into the entry's "env", so ${cmd.write ? file : 'the snippet'} holds it), or use --token-keychain ACCOUNT (\`gatehouse tokens create --keychain ACCOUNT\`), which keeps every secret out of the file\n`,
    );
    return EXIT.usage;
  }

  for (const h of cmd.opts.headers) {
    if (!/\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(h.value)) {
      io.err(
        `note: the value of --header ${h.name} will be stored in ${format.label}'s config file as given; for a secret, use --token-keychain or a \${VAR} reference instead\n`,
      );
    }
  }
  if (cmd.opts.remote) {
    const url = quotePosix(cmd.opts.remote);
    io.err(
      `note: this entry reaches ${cmd.opts.remote} through the running Gatehouse service, which needs an upstream for it (\`gatehouse upstreams add ID --url ${url} --oauth\`, then \`gatehouse upstreams login ID\`) and a token whose user may use upstreams\n`,
    );
  }
  if (token.kind === 'env') {
    io.err(
      format.prompts
        ? `note: ${format.label} asks for the token (a password prompt) when it starts the server and passes it in ${token.variable}; nothing secret is stored\n`
        : `note: the entry holds the token (from ${token.variable}) in its "env": keep ${cmd.write ? file : 'it'} private, or use --token-keychain instead\n`,
    );
  }

  if (!cmd.write) {
    if (cmd.client === 'claude-code') {
      io.out(`${claudeMcpAddCommand(cmd.name, entry, io.platform)}\n`);
      io.err(`(or run again with --write to add it to ${file})\n`);
    } else {
      io.out(`${JSON.stringify(clientDocument(cmd.client, cmd.name, entry), null, 2)}\n`);
      io.err(
        `add this under "${format.key}" in ${file}${entry.inputs ? ' (and the "inputs" beside it)' : ''}, or run again with --write\n`,
      );
    }
    return EXIT.ok;
  }

  try {
    const result = await writeServerEntry(file, {
      key: format.key,
      name: cmd.name,
      entry: entry.entry,
      ...(entry.inputs ? { inputs: entry.inputs } : {}),
    });
    if (!result.changed) io.out(`${file} already starts "${cmd.name}" this way; nothing changed\n`);
    else if (result.created) io.out(`created ${file} with the "${cmd.name}" server\n`);
    else io.out(`${result.replaced ? 'updated' : 'added'} "${cmd.name}" in ${file} (backup: ${result.backup})\n`);
    if (entry.containsToken && (result.mode & 0o077) !== 0)
      io.err(
        `warning: ${file} now holds the token and other users may read it (mode ${result.mode.toString(8)}): chmod 600 it\n`,
      );
    if (result.changed) io.err(`restart ${format.label} to pick it up\n`);
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
