/**
 * A minimal Chrome DevTools Protocol driver for the report tests: starts
 * headless Chromium on a loopback debugging port, opens a page, and lets a test
 * navigate, evaluate script in the page, click, and take screenshots. Uses
 * undici's WebSocket; no other dependency.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'undici';

export const CHROMIUM = '/usr/bin/chromium';

export interface Page {
  /** Navigates and waits until the report's script has run (body[data-ready]). */
  open(url: string): Promise<void>;
  /** Evaluates an expression in the page and returns its (JSON) value. */
  evaluate<T>(expression: string): Promise<T>;
  /** Clicks the first element matching `selector` (a real mouse click at its centre). */
  click(selector: string): Promise<void>;
  /** PNG of the viewport. */
  screenshot(): Promise<Buffer>;
  close(): Promise<void>;
}

export async function launch(opts: { width?: number; height?: number } = {}): Promise<Page> {
  const profile = await mkdtemp(join(tmpdir(), 'report-cdp-'));
  const width = opts.width ?? 1400;
  const height = opts.height ?? 1000;
  const proc = spawn(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--hide-scrollbars',
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      `--window-size=${width},${height}`,
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  try {
    const browserUrl = await devtoolsUrl(proc);
    const port = new URL(browserUrl).port;
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ type: string; webSocketDebuggerUrl: string }>;
    const page = targets.find((t) => t.type === 'page');
    if (!page) throw new Error('Chromium opened no page');
    const cdp = await connect(page.webSocketDebuggerUrl);
    await cdp.send('Page.enable');
    await cdp.send('Runtime.enable');
    await cdp.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
    const evaluate = async <T>(expression: string): Promise<T> => {
      const r = (await cdp.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })) as {
        result: { value?: T };
        exceptionDetails?: { text: string; exception?: { description?: string } };
      };
      if (r.exceptionDetails) throw new Error(`in page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
      return r.result.value as T;
    };
    const waitFor = async (expression: string, ms = 20_000): Promise<void> => {
      const until = Date.now() + ms;
      while (!(await evaluate<boolean>(`Boolean(${expression})`).catch(() => false))) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${expression}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    return {
      async open(url) {
        await cdp.send('Page.navigate', { url });
        await waitFor(
          `document.readyState === 'complete' && document.body && document.body.getAttribute('data-ready') === 'true' && location.href === ${JSON.stringify(url)}`,
        );
      },
      evaluate,
      async click(selector) {
        const box = await evaluate<{ x: number; y: number } | null>(`(() => {
          const el = document.querySelector(${JSON.stringify(selector)});
          if (!el) return null;
          el.scrollIntoView({ block: 'center' });
          const r = el.getBoundingClientRect();
          return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
        })()`);
        if (!box) throw new Error(`no element matches ${selector}`);
        for (const type of ['mousePressed', 'mouseReleased']) {
          await cdp.send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 });
        }
      },
      async screenshot() {
        const r = (await cdp.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
        return Buffer.from(r.data, 'base64');
      },
      async close() {
        cdp.close();
        await stop(proc);
        await removeProfile(profile);
      },
    };
  } catch (e) {
    await stop(proc);
    await removeProfile(profile);
    throw e;
  }
}

function devtoolsUrl(proc: ChildProcess): Promise<string> {
  return new Promise((resolveUrl, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`Chromium did not start: ${text.slice(-500)}`)), 30_000);
    proc.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]!);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited (${code}): ${text.slice(-500)}`));
    });
  });
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
}

async function connect(url: string): Promise<{ send(method: string, params?: object): Promise<unknown>; close(): void }> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolveOpen, reject) => {
    ws.addEventListener('open', () => resolveOpen(), { once: true });
    ws.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)), { once: true });
  });
  let next = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  ws.addEventListener('message', (event) => {
    const msg = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (msg.id === undefined) return;
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.error) p.reject(new Error(msg.error.message));
    else p.resolve(msg.result);
  });
  return {
    send(method, params = {}) {
      const id = ++next;
      return new Promise((resolveSend, reject) => {
        pending.set(id, { resolve: resolveSend, reject });
        ws.send(JSON.stringify({ id, method, params }));
      });
    },
    close() {
      ws.close();
    },
  };
}

/**
 * Chromium's helper processes (crashpad, renderers) can still write into the profile for a moment
 * after the browser process exits, so a single rmdir may meet ENOTEMPTY (seen on CI). Retry, and
 * leave a stray temporary directory rather than fail a test over it.
 */
async function removeProfile(profile: string): Promise<void> {
  await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }).catch(() => undefined);
}
