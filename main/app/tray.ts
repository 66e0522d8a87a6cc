import { join } from 'node:path';
import { Menu, Tray, app, nativeImage } from 'electron';
import type { NativeImage } from 'electron';
import { buildTrayMenu, trayIconState, trayTooltip } from './tray-menu.ts';
import { pendingBadge } from '../core/staging/approval-notices.ts';
import type { TrayActions, TrayIconState, TrayState } from './tray-menu.ts';

/**
 * macOS gets template images (black + alpha, recoloured by the menu bar;
 * Electron picks the @2x file by itself); elsewhere coloured icons that read
 * on light and dark panels.
 */
export function trayIconPath(iconDir: string, state: TrayIconState, platform: NodeJS.Platform): string {
  return join(iconDir, platform === 'darwin' ? `tray-${state}Template.png` : `tray-${state}.png`);
}

export class TrayController {
  private readonly tray: Tray;
  private readonly images = new Map<TrayIconState, NativeImage>();
  private icon: TrayIconState | null = null;

  constructor(private readonly deps: { iconDir: string; platform: NodeJS.Platform; actions: TrayActions }) {
    this.tray = new Tray(this.image('off'));
    this.icon = 'off';
    // Windows and Linux users expect a left click to open the window; macOS shows the menu.
    if (deps.platform !== 'darwin') this.tray.on('click', () => deps.actions.openConsole());
  }

  update(state: TrayState): void {
    const icon = trayIconState(state);
    if (icon !== this.icon) {
      this.tray.setImage(this.image(icon));
      this.icon = icon;
    }
    this.tray.setToolTip(trayTooltip(state));
    this.tray.setContextMenu(Menu.buildFromTemplate(buildTrayMenu(state, this.deps.actions)));
    // The Dock badge on macOS (and the launcher count on Linux desktops that have one); on macOS the count beside the menu-bar icon too.
    if (this.deps.platform === 'darwin' || this.deps.platform === 'linux') app.setBadgeCount(state.pendingTotal);
    if (this.deps.platform === 'darwin') this.tray.setTitle(pendingBadge(state.pendingTotal));
  }

  destroy(): void {
    this.tray.destroy();
  }

  private image(state: TrayIconState): NativeImage {
    let image = this.images.get(state);
    if (!image) {
      image = nativeImage.createFromPath(trayIconPath(this.deps.iconDir, state, this.deps.platform));
      if (this.deps.platform === 'darwin') image.setTemplateImage(true);
      this.images.set(state, image);
    }
    return image;
  }
}
