#!/usr/bin/env node
// gatehouse-bridge: the pre-built bundle when there is one (fast start-up),
// else the TypeScript source through tsx (a development checkout).
import { existsSync } from 'node:fs';
import { enableCompileCache } from './compile-cache.cjs';

const bundle = new URL('../dist/bridge/gatehouse-bridge.mjs', import.meta.url);
if (existsSync(bundle)) {
  enableCompileCache();
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../bridge/entry.ts', import.meta.url).href);
}
