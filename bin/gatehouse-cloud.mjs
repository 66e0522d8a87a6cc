#!/usr/bin/env node
// Runs the built service (dist/cloud/cli.js) when there is one, else the
// TypeScript sources through tsx's loader in this same process (a checkout
// works without a build step; signals reach the service directly).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = fileURLToPath(new URL('../dist/cloud/cli.js', import.meta.url));
if (existsSync(built)) {
  await import(built);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cloud/cli.ts');
}
