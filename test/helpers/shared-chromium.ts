import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';
/** Headless, and none of the background connections this machine's closed network would refuse. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let shared: Promise<Browser> | undefined;

/**
 * One Chromium per test worker, for every file that drives a browser: a launch costs 2-5 s of CPU (the browser, its
 * GPU and network processes, a first renderer), and the worker runs file after file (vitest.config.ts). Each test
 * takes its own context (`newContext`: its own cookies and storage) and closes that, never the browser, which ends
 * with the worker (playwright-core closes it at exit; Chromium ends when its pipe closes).
 */
export function sharedChromium(): Promise<Browser> {
  shared ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS }).then((b) => {
    b.once('disconnected', () => (shared = undefined));
    return b;
  });
  return shared;
}
