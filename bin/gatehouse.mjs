#!/usr/bin/env node
// gatehouse: the pre-built bundle when there is one (`npm run build`; fast
// start-up, little memory), else the TypeScript source through tsx's loader
// in this same process (a checkout without a build). Either way the command
// runs in this process, so signals reach the service directly.
import { existsSync } from 'node:fs';
import { enableCompileCache } from './compile-cache.mjs';

const bundle = new URL('../dist/cli/gatehouse.mjs', import.meta.url);
if (existsSync(bundle)) {
  enableCompileCache();
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../main/cli.ts');
}
