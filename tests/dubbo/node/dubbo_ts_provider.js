'use strict';
// A dubbo.ts (hessian.js 2.11) provider of org.wheelbeat.interop.Echo, the echo server's method
// names: echo(Object), echoString, echoInt, echoLong, echoDouble, echoBoolean, echoBytes,
// echoList, echoMap, fail(String) (throws).
//
//   node dubbo_ts_provider.js
//
// Listens on a free loopback port, prints "dubbo_ts_provider: listening on 127.0.0.1:PORT" and
// serves until SIGTERM, then prints "dubbo_ts_provider: requests N, failures F" on stderr.
// No registry: dubbo.ts's Provider.listen() insists on one (and registers port 0 when asked to
// bind it), so the TCP server is ours and hands each connection to the Provider.
const net = require('net');
const { Provider, PROVIDER_CONTEXT_STATUS } = require('dubbo.ts');
const java = require('js-to-java');

const kService = 'org.wheelbeat.interop.Echo';

// hessian.js decodes int, long and double all to numbers (a long beyond 2^53 to a string): the
// declared return type of each method puts the Hessian type back, as a Java provider's would.
class Echo {
  echo(v) { return v; }
  echoString(v) { return java.String(v); }
  echoInt(v) { return java.int(v); }
  echoLong(v) { return java.long(v); }
  echoDouble(v) { return java.double(v); }
  echoBoolean(v) { return java.boolean(v); }
  echoBytes(v) { return v; }
  echoList(v) { return v; }
  echoMap(v) { return v; }
  fail(message) { throw new Error(message); }
}

let requests = 0;
let failures = 0;
const quiet = { info() {}, debug() {}, warn: console.error, error: console.error,
  fatal: console.error };
const provider = new Provider({ application: 'wheelbeat-node-interop', dubbo_version: '2.0.2',
  port: 0, pid: process.pid, logger: quiet });
provider.addService(Echo, { interface: kService, methods: Object.getOwnPropertyNames(
  Echo.prototype).filter((m) => m !== 'constructor') });
provider.on('data', (ctx, chunk) => {
  requests++;
  const service = new chunk.interfacetarget();
  const method = service[ctx.req.method];
  if (typeof method !== 'function' || ctx.req.method === 'constructor') {
    failures++;
    ctx.status = PROVIDER_CONTEXT_STATUS.SERVICE_NOT_FOUND;
    ctx.body = `no method ${ctx.req.method} in ${kService}`;
    return;
  }
  try {
    ctx.body = method.apply(service, ctx.req.parameters);
    ctx.status = PROVIDER_CONTEXT_STATUS.OK;
  } catch (e) {
    failures++;
    ctx.status = PROVIDER_CONTEXT_STATUS.SERVICE_ERROR;
    ctx.body = e.message;
  }
});

const server = net.createServer((socket) => provider.connect(socket));
server.listen(0, '127.0.0.1', () => {
  console.log(`dubbo_ts_provider: listening on 127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => {
  console.error(`dubbo_ts_provider: requests ${requests}, failures ${failures}`);
  process.exit(0);
});
