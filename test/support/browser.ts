/** Headless Debian Chromium for page tests: where it is, why a test skips without it, and how it starts here. */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';
export const browserSkip: false | string = existsSync(CHROMIUM) ? false : `${CHROMIUM} not found: install Debian's chromium (.ci/run does) to run the browser test`;
/** Screenshots land here (ignored by git). */
export const artifacts = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Start Chromium with the flags this closed network needs (no background connections, no GPU). */
export async function launchChromium(): Promise<any> {
  mkdirSync(artifacts, { recursive: true });
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
