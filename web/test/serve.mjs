// A static file server for the web package: serves a folder (build/web/dist) on 127.0.0.1, with the
// types a browser insists on (application/wasm for WebAssembly streaming compilation, text/javascript
// for modules). Node.js only, no dependencies.
//
//   node web/test/serve.mjs build/web/dist [PORT]      then open http://127.0.0.1:PORT/demo/
//
//   import {serve} from './serve.mjs';
//   const server = await serve('build/web/dist');       // a free port
//   ... server.url ...                                    // 'http://127.0.0.1:41234/'
//   await server.close();

import {createReadStream} from 'node:fs';
import {stat} from 'node:fs/promises';
import {createServer} from 'node:http';
import {extname, join, resolve, sep} from 'node:path';
import {fileURLToPath} from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

function typeOf(path) {
  return TYPES[extname(path).toLowerCase()] || 'application/octet-stream';
}

// The file a request names inside `root`, or null when it names something outside it.
function fileOf(root, url) {
  let path;
  try {
    path = decodeURIComponent(new URL(url, 'http://localhost').pathname);
  } catch {
    return null;
  }
  const file = resolve(join(root, path));
  if (file !== root && !file.startsWith(root.endsWith(sep) ? root : root + sep)) return null;
  return path.endsWith('/') ? join(file, 'index.html') : file;
}

async function respond(root, request, response) {
  const send = (status, text) => {
    response.writeHead(status, {'Content-Type': 'text/plain; charset=utf-8'});
    response.end(request.method === 'HEAD' ? undefined : text + '\n');
  };
  if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'only GET and HEAD');
  const file = fileOf(root, request.url);
  if (!file) return send(403, 'outside the served folder');
  let info;
  try {
    info = await stat(file);
  } catch {
    return send(404, `not found: ${request.url}`);
  }
  if (info.isDirectory()) {
    // /demo -> /demo/, so that the page's relative URLs resolve inside its folder.
    const {pathname, search} = new URL(request.url, 'http://localhost');
    response.writeHead(301, {Location: pathname + '/' + search});
    return response.end();
  }
  // The browser asks again each time (no-cache) and gets 304 while the file is unchanged: a rebuilt
  // wgx.wasm is picked up at once, an unchanged one is not sent again.
  const modified = new Date(Math.floor(info.mtimeMs / 1000) * 1000);
  const headers = {'Last-Modified': modified.toUTCString(), 'Cache-Control': 'no-cache'};
  const since = Date.parse(request.headers['if-modified-since'] || '');
  if (since >= modified.getTime()) {
    response.writeHead(304, headers);
    return response.end();
  }
  response.writeHead(200, {...headers, 'Content-Type': typeOf(file), 'Content-Length': info.size});
  if (request.method === 'HEAD') return response.end();
  createReadStream(file).on('error', () => response.destroy()).pipe(response);
}

/**
 * Serves `dir` on 127.0.0.1:`port` (0: a free port).
 * @returns {Promise<{url: string, port: number, close: () => Promise<void>}>}
 */
export async function serve(dir, port = 0) {
  const root = resolve(dir);
  const info = await stat(root);
  if (!info.isDirectory()) throw new Error(`${root} is not a folder`);
  const server = createServer((request, response) => {
    respond(root, request, response).catch((e) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(e));
    });
  });
  await new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', done);
  });
  const actual = server.address().port;
  return {
    url: `http://127.0.0.1:${actual}/`,
    port: actual,
    close: () => new Promise((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [dir, port] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node web/test/serve.mjs DIR [PORT]');
    process.exit(2);
  }
  const server = await serve(dir, port ? Number(port) : 8080);
  console.log(`serving ${resolve(dir)} at ${server.url} (the demo: ${server.url}demo/)`);
}
