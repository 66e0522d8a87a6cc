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

/**
 * Why an explicit data dir cannot be used, or null. An empty `--data-dir` is
 * what `--data-dir "$DIR"` gives when DIR is unset: falling back to the
 * default would run a script against a person's real profile. (An empty
 * GATEHOUSE_DATA_DIR counts as unset, like the XDG variables.)
 */
export function dataDirProblem(flag: string | undefined): string | null {
  if (flag === undefined) return null;
  if (flag.trim() === '')
    return '--data-dir is empty (an unset shell variable?): name a folder, or leave the flag out to use the default data dir';
  if (/[\0\r\n]/.test(flag)) return '--data-dir must not contain NUL or line breaks';
  return null;
}

/** --data-dir wins, then GATEHOUSE_DATA_DIR, then the platform's app data folder. Throws on a flag dataDirProblem refuses. */
export function resolveDataDir(
  flag: string | undefined,
  platform: string,
  env: Record<string, string | undefined>,
  home: string,
): string {
  const problem = dataDirProblem(flag);
  if (problem) throw new Error(problem);
  return flag || env.GATEHOUSE_DATA_DIR || defaultDataDir(platform, env, home);
}

/** What a client token's vault entry may be called (`--keychain NAME`, `--token-keychain NAME`). */
export const KEYCHAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
