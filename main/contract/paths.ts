/**
 * Where Gatehouse keeps its data, shared by the service, the CLI and the
 * bridge (which finds `runtime.json` here). Pure: the caller passes the
 * platform, environment and home folder.
 */
export const APP_DIR_NAME = 'Gatehouse';
export const RUNTIME_FILE = 'runtime.json';
export const VAULT_SERVICE = 'Gatehouse';

export function defaultDataDir(platform: string, env: Record<string, string | undefined>, home: string): string {
  if (platform === 'win32') return `${env.APPDATA ?? `${home}\\AppData\\Roaming`}\\${APP_DIR_NAME}`;
  if (platform === 'darwin') return `${home}/Library/Application Support/${APP_DIR_NAME}`;
  return `${env.XDG_CONFIG_HOME || `${home}/.config`}/${APP_DIR_NAME}`;
}

/** --data-dir wins, then GATEHOUSE_DATA_DIR, then the platform's app data folder. */
export function resolveDataDir(flag: string | undefined, platform: string, env: Record<string, string | undefined>, home: string): string {
  return flag || env.GATEHOUSE_DATA_DIR || defaultDataDir(platform, env, home);
}
