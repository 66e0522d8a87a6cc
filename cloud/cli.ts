#!/usr/bin/env node
import { main } from './cli/main.ts';

const code = await main(process.argv.slice(2));
if (process.argv[2] !== 'serve' || code !== 0) process.exitCode = code;
