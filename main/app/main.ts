import { protocol } from 'electron';
import { startService } from '../service.ts';
import { registerAppScheme } from './app-protocol.ts';
import { runDesktop } from './desktop.ts';

// Electron's entry (package.json "main"). The scheme must be registered
// before the app is ready, so it happens here, first.
registerAppScheme(protocol);
runDesktop(startService).catch((error: unknown) => {
  console.error('gatehouse: the desktop shell failed to start', error);
  process.exit(1);
});
