#!/usr/bin/env node
// gatehouse: the pre-built bundle when there is one (`npm run build`; fast start-up, little memory), else the
// TypeScript source through tsx's loader in this same process (a checkout without a build). Either way the command
// runs in this process, so signals reach the service directly.
//
// CommonJS, so that `gatehouse --version` answers without starting Node's ES module loader (about 8 ms, a third of
// what the command would cost beyond Node's own start); every other command loads the ES module bundle below.
'use strict';
const { existsSync, readFileSync, writeSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

// Whoever read the output went away (`gatehouse ... | head -1`): end as a process killed by SIGPIPE does (128 + 13),
// without the stack trace of an unhandled EPIPE.
const READER_GONE = 141;

// The commands dist/cli/remote.cjs holds (main/cli/remote-main.ts REMOTE; test/cli/startup.test.ts keeps the two
// lists equal): only for these is it loaded, ~7 ms that every other command would pay for nothing.
const REMOTE_COMMANDS = ['tokens', 'users', 'settings', 'status', 'staged', 'console-link', 'policy'];

/** remote.cjs's entry, or undefined when it cannot be loaded (a build cut short): the full bundle does its work. */
function loadRemote(file) {
  try {
    return require(file).remoteMain;
  } catch {
    return undefined;
  }
}

if (process.argv.length === 3 && process.argv[2] === '--version') {
  // The same source as main/version.ts: package.json's version.
  try {
    writeSync(1, `${JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).version}\n`);
  } catch (e) {
    if (e.code !== 'EPIPE') throw e;
    process.exitCode = READER_GONE;
  }
} else {
  // Not for --version: process.stdout is a stream built at first use, which that answer does without.
  process.stdout.on('error', (e) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(READER_GONE);
  });
  const argv = process.argv.slice(2);
  const dist = join(__dirname, '..', 'dist', 'cli');
  const bundle = join(dist, 'gatehouse.mjs');
  const remote = join(dist, 'remote.cjs');
  const built = existsSync(bundle);
  if (built) require('./compile-cache.cjs').enableCompileCache();
  // The ES module bundle (or the source): every command, run from its start.
  const everything = () =>
    built
      ? import(pathToFileURL(bundle).href)
      : import('tsx/esm/api').then(({ register }) => {
          register();
          return import(pathToFileURL(join(__dirname, '..', 'main', 'cli.ts')).href);
        });
  // A command a running service answers runs first from one CommonJS file, with no ES module loader
  // (main/cli/remote-main.ts); undefined: not such a command, or no service to answer it.
  const remoteMain = built && REMOTE_COMMANDS.includes(argv[0]) && existsSync(remote) ? loadRemote(remote) : undefined;
  const run = remoteMain
    ? remoteMain(argv).then((code) => (code === undefined ? everything() : void (process.exitCode = code)))
    : everything();
  run.catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
