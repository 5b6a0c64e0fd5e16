'use strict';
// A Node consumer of the greeter sample (samples/rpc/greeter.h: org.wheelbeat.samples.Greeter,
// String sayHello(String), Dubbo's $echo): dubbo2.js by host:port, or dubbo.ts through ZooKeeper.
//
//   node greeter_consumer.js --direct 127.0.0.1:PORT --expect 'Hello, Ada! (127.0.0.1:PORT)'
//   node greeter_consumer.js --zookeeper 127.0.0.1:PORT --expect 'Hello, Ada! (127.0.0.1:PORT)'
//
// Calls sayHello("Ada") (the answer must be --expect exactly) and, from dubbo2.js, $echo("ping")
// (must be "ping"). stdout: one JSON line {target, calls, ok, mismatches: [...]}; exit 1 on a mismatch.
const java = require('js-to-java');
const { show, flags } = require('./check');
const { dubboTsInvoker, call } = require('./dubbo_ts');

const kService = 'org.wheelbeat.samples.Greeter';
const opts = flags(process.argv.slice(2), { direct: '', zookeeper: '', expect: '' });
if (!opts.direct === !opts.zookeeper || !opts.expect) {
  console.error('give --expect TEXT and exactly one of --direct HOST:PORT, --zookeeper HOST:PORT');
  process.exit(2);
}

// dubbo2.js 2.3.9: a proxy whose methods resolve to {res} or {err}.
function direct() {
  const { DirectlyDubbo } = require('dubbo2.js');
  const dubbo = DirectlyDubbo.from({ dubboAddress: opts.direct, dubboVersion: '2.0.2',
    dubboInvokeTimeout: 10 });
  const greeter = dubbo.proxyService({ dubboInterface: kService, version: '0.0.0',
    methods: { sayHello: (name) => [java.String(name)], $echo: (v) => [java.String(v)] } });
  return (method, arg) => greeter[method](arg);
}

// dubbo.ts 1.0.72: an invoker found in ZooKeeper (it throws on an exception or error status).
async function throughZookeeper() {
  const invoker = await dubboTsInvoker(opts.zookeeper, kService, 'greeter-node');
  return (method, arg) => call(invoker, method, java.String(arg));
}

async function main() {
  const call = opts.direct ? direct() : await throughZookeeper();
  const summary = { target: opts.direct ? `dubbo2.js direct ${opts.direct}` :
    `dubbo.ts zookeeper ${opts.zookeeper}`, calls: 0, ok: 0, mismatches: [] };
  const calls = [['sayHello', 'Ada', opts.expect]];
  // dubbo.ts calls only the methods the provider's url lists ($echo is Dubbo's, never listed).
  if (opts.direct) calls.push(['$echo', 'ping', 'ping']);
  for (const [method, arg, expected] of calls) {
    summary.calls++;
    const { res, err } = await call(method, arg);
    if (!err && res === expected) summary.ok++;
    else summary.mismatches.push({ method, got: show(res), error: err && String(err.message) });
  }
  console.log(JSON.stringify(summary));
  process.exit(summary.ok === summary.calls ? 0 : 1);
}

main().catch((e) => {
  console.error(`greeter_consumer: ${e.stack || e}`);
  process.exit(1);
});
