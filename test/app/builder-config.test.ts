import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// electron-builder's own loader and schema validator, so a typo in the config fails here, not at release time.
const require = createRequire(import.meta.url);
interface BuilderConfig {
  electronFuses: Record<string, boolean>;
  files: { filter: string[] }[];
  mac: { target: string[]; icon: string };
  win: { target: string[]; icon: string };
  linux: { target: string[]; icon: string };
}
const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config') as {
  getConfig(projectDir: string, configPath: string | null, configFromOptions: unknown): Promise<BuilderConfig>;
  validateConfiguration(config: unknown, debugLogger: unknown): Promise<void>;
};
const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };
const root = new URL('../../', import.meta.url).pathname;

describe('electron-builder.yml', async () => {
  const config = await getConfig(root, null, null);

  it("passes electron-builder's schema", async () => {
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
  });

  it('flips the security fuses', () => {
    expect(config.electronFuses).toMatchObject({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    });
  });

  it('builds dmg+zip, nsis, AppImage+deb from dist/ and dist-renderer/ with icons that exist', () => {
    expect(config.mac.target).toEqual(['dmg', 'zip']);
    expect(config.win.target).toEqual(['nsis']);
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.files.flatMap((f) => f.filter)).toEqual(expect.arrayContaining(['dist/**', 'dist-renderer/**']));
    for (const icon of [config.mac.icon, config.win.icon, config.linux.icon])
      expect(existsSync(root + icon), icon).toBe(true);
  });

  it('ships a tray icon for every state, template and coloured, at 1x and 2x', () => {
    for (const state of ['off', 'on', 'attention']) {
      for (const name of [
        `tray-${state}Template.png`,
        `tray-${state}Template@2x.png`,
        `tray-${state}.png`,
        `tray-${state}@2x.png`,
      ]) {
        const png = readFileSync(`${root}assets/${name}`);
        expect(png.subarray(1, 4).toString(), name).toBe('PNG');
        expect(png.readUInt32BE(16), name).toBe(name.includes('@2x') ? 32 : 16);
      }
    }
  });
});
