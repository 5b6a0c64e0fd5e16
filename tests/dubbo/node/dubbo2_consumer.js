'use strict';
// A dubbo2.js (hessian.js 2.5.0, js-to-java) consumer of org.wheelbeat.interop.Echo.
//
//   node dubbo2_consumer.js --direct 127.0.0.1:PORT [--mode matrix]
//   node dubbo2_consumer.js --zookeeper 127.0.0.1:PORT [--mode matrix]
//   node dubbo2_consumer.js --direct 127.0.0.1:PORT --mode load [--calls 100000] [--inflight 64]
//
// matrix: every case of matrix.js through its typed echo, one at a time; each answer must equal
// the value sent AND carry the same Hessian type on the wire (read from the response frame, as
// hessian.js decodes int, long and double alike to numbers); then fail("...") must reject with
// that message. load: --calls echoString calls, --inflight at a time.
// stdout: one JSON line {mode, target, calls, ok, decodeErrors, mismatches: [...]}; exit status 1
// on any mismatch or decode error, 2 on bad usage.
const { Dubbo, DirectlyDubbo, java, setting } = require('dubbo2.js');
const decoder = require('dubbo2.js/es7/decode');
const hessianTypes = require('dubbo2.js/node_modules/hessian.js/lib/object');
const { cases } = require('./matrix');
const { responseWireType, sameValue, show, flags, argument } = require('./check');

const kService = 'org.wheelbeat.interop.Echo';
const opts = flags(process.argv.slice(2),
  { direct: '', zookeeper: '', mode: 'matrix', calls: '100000', inflight: '64' });
if (!opts.direct === !opts.zookeeper) {
  console.error('give exactly one of --direct HOST:PORT and --zookeeper HOST:PORT');
  process.exit(2);
}

// Every response frame passes here (socket-worker.js calls decode.decode): its value's wire type,
// in arrival order, and the frames the library could not decode.
let lastWireType = null;
let decodeErrors = 0;
const originalDecode = decoder.decode;
decoder.decode = (frame) => {
  lastWireType = responseWireType(frame);
  const result = originalDecode(frame);
  if (result.err && result.err.name === 'DubboDecodeError' && frame[3] === 20) decodeErrors++;
  return result;
};

// byte[]: hessian.js 2.5.0 writes any $class starting with '[' as a list (writeArray, which
// refuses a Buffer), and js-to-java's java.array.byte() sends a typed list "[byte" of ints, not
// Hessian's binary form. '[byte' mapped to writeBytes gives the binary form, and dubbo2.js's
// descriptor "[B" ('[' + byte's letter; a $class of '[B' would give "[LB;").
hessianTypes.SERIALIZER_MAP['[byte'] = 'Bytes';


const methods = {};
for (const name of ['echo', 'echoInt', 'echoLong', 'echoDouble', 'echoBoolean', 'echoString', 'echoBytes',
  'echoList', 'echoMap'])
  methods[name] = (arg) => [arg];
methods.fail = (message) => [java.String(message)];

async function connect() {
  if (opts.direct) {
    const dubbo = DirectlyDubbo.from({ dubboAddress: opts.direct, dubboVersion: '2.0.2',
      dubboInvokeTimeout: 10 });
    return dubbo.proxyService({ dubboInterface: kService, version: '0.0.0', methods });
  }
  // 2.3.9's registry mode: services declared up front, version and group from a Setting rule.
  const dubbo = new Dubbo({ application: { name: 'wheelbeat-node-interop' },
    register: opts.zookeeper, dubboVersion: '2.0.2', dubboInvokeTimeout: 10,
    dubboSetting: setting.match(kService, { version: '0.0.0' }),
    service: { echo: (d) => d.proxyService({ dubboInterface: kService, methods }) } });
  const service = dubbo.service.echo;
  await dubbo.ready();
  return service;
}

async function matrix(service, summary) {
  for (const c of cases) {
    summary.calls++;
    lastWireType = null;
    const { res, err } = await service[c.method](argument(c));
    if (err) summary.mismatches.push({ case: c.name, error: String(err.message || err) });
    else if (!sameValue(c, res)) summary.mismatches.push({ case: c.name, got: show(res) });
    else if (lastWireType !== c.type)
      summary.mismatches.push({ case: c.name, wireType: lastWireType, expected: c.type });
    else summary.ok++;
  }
  const message = 'boom: \u00e9\u20ac\ud83d\ude00';
  summary.calls++;
  const { res, err } = await service.fail(message);
  if (err && err.message && err.message.includes(message)) summary.ok++;
  else summary.mismatches.push({ case: 'fail', got: show(res), error: String(err && err.message) });
}

async function load(service, summary) {
  const total = Number(opts.calls);
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const value = `load-${i}`;
      summary.calls++;
      const { res, err } = await service.echoString(java.String(value));
      if (!err && res === value) summary.ok++;
      else if (summary.mismatches.length < 10)
        summary.mismatches.push({ call: i, got: show(res), error: err && String(err.message) });
    }
  };
  await Promise.all(Array.from({ length: Number(opts.inflight) }, worker));
}

async function main() {
  const summary = { mode: opts.mode, target: opts.direct ? `direct ${opts.direct}` :
    `zookeeper ${opts.zookeeper}`, calls: 0, ok: 0, decodeErrors: 0, mismatches: [] };
  const started = Date.now();
  const service = await connect();
  await (opts.mode === 'load' ? load(service, summary) : matrix(service, summary));
  summary.decodeErrors = decodeErrors;
  summary.ms = Date.now() - started;
  console.log(JSON.stringify(summary));
  const clean = summary.mismatches.length === 0 && decodeErrors === 0 && summary.ok === summary.calls;
  process.exit(clean ? 0 : 1);
}

main().catch((e) => {
  console.error(`dubbo2_consumer: ${e.stack || e}`);
  process.exit(1);
});
