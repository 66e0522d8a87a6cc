// V8's code cache for the bundles a command loads (Node 22's module.enableCompileCache): from the second start on,
// a command skips compiling the ~1-2 MB of JavaScript it loads. The cache lives in this user's own cache folder,
// created private (0700), never in a shared temporary folder: another local user must not be able to plant compiled
// code that our process would run. Anything that goes wrong here only costs the speed-up.
'use strict';
const { mkdirSync } = require('node:fs');
const nodeModule = require('node:module');
const { homedir } = require('node:os');
const { join } = require('node:path');

function cacheBase() {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches');
  if (process.platform === 'win32') return process.env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local');
  return process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
}

function enableCompileCache() {
  // NODE_COMPILE_CACHE set: Node has already enabled it, where the person asked.
  if (typeof nodeModule.enableCompileCache !== 'function' || process.env.NODE_COMPILE_CACHE) return;
  try {
    const dir = join(cacheBase(), 'gatehouse', 'node-compile-cache');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    nodeModule.enableCompileCache(dir);
  } catch {
    // a read-only or missing home: start without the cache
  }
}

module.exports = { enableCompileCache };
