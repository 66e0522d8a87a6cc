import type { ReleaseArch, ReleasePlatform } from '../../main/contract/cloud/index.ts';

/**
 * The platform and arch of an installer from its name, as electron-builder
 * names them (`Gatehouse-1.4.0-arm64.AppImage`, `Gatehouse-1.4.0-mac.zip`,
 * `Gatehouse-Setup-1.4.0.exe`); null when the name does not say.
 * `releases publish --platform/--arch` override it.
 */
export function guessTarget(name: string): { platform: ReleasePlatform; arch: ReleaseArch } | null {
  const n = name.toLowerCase();
  let platform: ReleasePlatform | null = null;
  if (/\.(exe|msi|nupkg|appx)$/.test(n)) platform = 'win';
  else if (/\.(dmg|pkg)$/.test(n) || /(^|[-_.])(mac|darwin|osx)([-_.].*)?\.zip$/.test(n)) platform = 'mac';
  else if (/\.(appimage|deb|rpm|snap|pacman|tar\.gz|tar\.xz)$/.test(n)) platform = 'linux';
  if (!platform) return null;
  const has = (re: string) => new RegExp(`(^|[-_.])(${re})([-_.]|$)`).test(n);
  const arch: ReleaseArch = has('arm64|aarch64')
    ? 'arm64'
    : has('armv7l')
      ? 'armv7l'
      : has('x86_64|amd64|x64')
        ? 'x64'
        : has('ia32|i386|x86')
          ? 'ia32'
          : has('universal')
            ? 'universal'
            : 'x64';
  return { platform, arch };
}
