#!/usr/bin/env node
// Loads the TypeScript CLI through tsx's loader in this same process (so
// signals reach the service directly); a checkout works without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../main/cli.ts');
