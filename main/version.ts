import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './package-root.ts';

/** package.json's version, which the bundles' build writes in (bridge/build.ts `common`): they read no file for it. */
declare const __GATEHOUSE_VERSION__: string | undefined;

/** The package version: package.json's (one source of truth), read once when running from source. */
export const VERSION: string =
  typeof __GATEHOUSE_VERSION__ === 'string'
    ? __GATEHOUSE_VERSION__
    : (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
