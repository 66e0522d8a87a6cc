import http from 'node:http';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { configureRequestOptions, configureRequestUrl, HttpExecutor, type DownloadOptions } from 'builder-util-runtime';
import type { AppAdapter } from 'electron-updater/out/AppAdapter.js';
import { AppImageUpdater } from 'electron-updater/out/AppImageUpdater.js';

/** electron-updater's ElectronHttpExecutor with node:http in place of Electron's net module (the one part that needs Electron). */
export class NodeExecutor extends HttpExecutor<http.ClientRequest> {
  createRequest(options: http.RequestOptions, callback: (res: http.IncomingMessage) => void): http.ClientRequest {
    return http.request(options, callback);
  }

  /** As ElectronHttpExecutor.download: the body goes through builder-util-runtime's sha512 check into the file. */
  download(url: URL, destination: string, options: DownloadOptions): Promise<string> {
    return options.cancellationToken.createPromise((resolve, reject, onCancel) => {
      const requestOptions: http.RequestOptions = {
        headers: (options.headers as http.OutgoingHttpHeaders) || undefined,
      };
      configureRequestUrl(url, requestOptions);
      configureRequestOptions(requestOptions);
      this.doDownload(
        requestOptions,
        {
          destination,
          options,
          onCancel,
          callback: (e) => (e == null ? resolve(destination) : reject(e)),
          responseHandler: null,
        },
        0,
      );
    });
  }
}

/**
 * The desktop app as electron-updater sees it (version 1.0.0, AppImageUpdater, the class the Linux app
 * runs, asking as `platform`), pointed at a generic feed, with a fixed staging id (its rollout position is 0.5).
 */
export async function testUpdater(dir: string, platform: NodeJS.Platform, feedUrl: string): Promise<AppImageUpdater> {
  const userData = await mkdtemp(join(dir, 'app-'));
  await writeFile(join(userData, '.updaterId'), '8f3b1c2e-4d5a-4b6c-8d7e-9f0a80000000');
  const app: AppAdapter = {
    version: '1.0.0',
    name: 'Gatehouse',
    isPackaged: true,
    appUpdateConfigPath: join(userData, 'app-update.yml'),
    userDataPath: userData,
    baseCachePath: userData,
    whenReady: () => Promise.resolve(),
    relaunch: () => undefined,
    quit: () => undefined,
    onQuit: () => undefined,
  };
  const u = new AppImageUpdater(undefined, app);
  const internals = u as unknown as {
    httpExecutor: HttpExecutor<http.ClientRequest>;
    _testOnlyOptions: { platform: NodeJS.Platform };
  };
  internals.httpExecutor = new NodeExecutor();
  internals._testOnlyOptions = { platform };
  u.logger = null;
  u.autoDownload = false;
  u.forceDevUpdateConfig = true;
  u.setFeedURL({ provider: 'generic', url: feedUrl });
  return u;
}
