'use strict';
// A dubbo.ts (hessian.js 2.11) consumer of org.wheelbeat.interop.Echo, found through ZooKeeper
// (dubbo.ts's Consumer has no direct mode).
//
//   node dubbo_ts_consumer.js --zookeeper 127.0.0.1:PORT
//
// The matrix of matrix.js, one call at a time: each answer must equal the value sent AND carry
// the same Hessian type on the wire (read from the response frames as they arrive); then
// fail("...") must reject with that message. stdout: one JSON line {mode, target, calls, ok,
// decodeErrors, mismatches: [...]}; exit status 1 on any mismatch.
const { dubboTsInvoker, call } = require('./dubbo_ts');
const ChannelDecoder = require('dubbo.ts/dist/consumer/decode').default;
const hessianTypes = require('hessian.js/lib/object');
const java = require('js-to-java');
const { cases } = require('./matrix');
const { responseWireType, sameValue, show, flags, argument } = require('./check');

const kService = 'org.wheelbeat.interop.Echo';
const opts = flags(process.argv.slice(2), { zookeeper: '' });
if (!opts.zookeeper) {
  console.error('--zookeeper HOST:PORT is required');
  process.exit(2);
}

// byte[] as Hessian binary with the descriptor "[B": see dubbo2_consumer.js (same hessian.js
// behaviour, same descriptor code in dubbo.ts).
hessianTypes.SERIALIZER_MAP['[byte'] = 'Bytes';

// The wire type of every response frame, in arrival order: the frames are cut from the bytes
// the channel's decoder receives (16-byte header, body length at 12..15).
let lastWireType = null;
let pending = Buffer.alloc(0);
const originalReceive = ChannelDecoder.prototype.receive;
ChannelDecoder.prototype.receive = function (channel, data, callback) {
  pending = Buffer.concat([pending, data]);
  while (pending.length >= 16) {
    const length = 16 + pending.readUInt32BE(12);
    if (pending.length < length) break;
    if ((pending[2] & 0x20) === 0) lastWireType = responseWireType(pending.subarray(0, length));
    pending = pending.subarray(length);
  }
  return originalReceive.call(this, channel, data, callback);
};


async function main() {
  const summary = { mode: 'matrix', target: `dubbo.ts zookeeper ${opts.zookeeper}`, calls: 0,
    ok: 0, decodeErrors: 0, mismatches: [] };
  const invoker = await dubboTsInvoker(opts.zookeeper, kService, 'wheelbeat-node-interop');
  for (const c of cases) {
    summary.calls++;
    lastWireType = null;
    const { res, err } = await call(invoker, c.method, argument(c));
    if (err) summary.mismatches.push({ case: c.name, error: String(err.message || err) });
    else if (!sameValue(c, res)) summary.mismatches.push({ case: c.name, got: show(res) });
    else if (lastWireType !== c.type)
      summary.mismatches.push({ case: c.name, wireType: lastWireType, expected: c.type });
    else summary.ok++;
  }
  const message = 'boom: \u00e9\u20ac\ud83d\ude00';
  summary.calls++;
  const { res, err } = await call(invoker, 'fail', java.String(message));
  if (err && String(err.message).includes(message)) summary.ok++;
  else summary.mismatches.push({ case: 'fail', got: show(res), error: String(err && err.message) });
  console.log(JSON.stringify(summary));
  process.exit(summary.mismatches.length === 0 && summary.ok === summary.calls ? 0 : 1);
}

main().catch((e) => {
  console.error(`dubbo_ts_consumer: ${e.stack || e}`);
  process.exit(1);
});
