/**
 * src/http/undici.ts loads undici's agent, proxy agent and request method from their own files:
 * they must be what undici's index exports and installs (a release that moved or changed them
 * fails here, while the module falls back to the index), and a process that loads what a run
 * loads must not load the index (the point of the module: about 0.1 s of every run).
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Agent, EnvHttpProxyAgent } from '../../src/http/undici.js';

const require = createRequire(import.meta.url);

describe('undici loaded file by file', () => {
  it('the agent and the proxy agent are the classes undici exports', () => {
    const undici = require('undici') as typeof import('undici');
    expect(Agent).toBe(undici.Agent);
    expect(EnvHttpProxyAgent).toBe(undici.EnvHttpProxyAgent);
  });

  it("every dispatcher has the request API undici's index installs (the proxy agent tunnels with connect)", () => {
    const api = require('undici/lib/api/index.js') as Record<string, unknown>;
    expect(Object.keys(api).sort()).toEqual(['connect', 'pipeline', 'request', 'stream', 'upgrade']);
    const agent = new Agent() as unknown as Record<string, unknown>;
    for (const [name, method] of Object.entries(api)) expect(agent[name], name).toBe(method);
  });

  it('a request through an agent reaches the server with its method, path, query and headers', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers['x-probe']}`);
      res.setHeader('content-type', 'text/plain');
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const agent = new Agent();
    try {
      const res = await agent.request({
        origin: `http://127.0.0.1:${port}`,
        path: '/fhir/R4/x?a=1&b=%20',
        method: 'PUT',
        headers: { 'x-probe': 'p' },
        body: 'b',
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('ok');
      expect(seen).toEqual(['PUT /fhir/R4/x?a=1&b=%20 p']);
    } finally {
      await agent.close();
      await new Promise((r) => server.close(r));
    }
  });

  it("a process that loads what a run loads (src/run/index.ts) does not load undici's index", async () => {
    const script = [
      "await import('./src/run/index.ts');",
      "const { createRequire } = await import('node:module');",
      "const cache = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/node_modules/undici/'));",
      'console.log(JSON.stringify(cache));',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url).pathname,
    });
    const loaded = JSON.parse(stdout.trim()) as string[];
    expect(loaded.some((f) => f.endsWith('/undici/lib/dispatcher/agent.js'))).toBe(true);
    expect(loaded.filter((f) => f.endsWith('/node_modules/undici/index.js') || f.includes('/undici/lib/web/'))).toEqual([]);
  });
});
