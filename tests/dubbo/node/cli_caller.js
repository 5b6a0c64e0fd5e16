'use strict';
// `wheelbeat-dubbo call` against a Node provider (dubbo_ts_provider.js): every case of matrix.js
// through its typed echo, plus echo(Object) and fail(String); stdout of each call compared with
// the typed JSON the tool must print (long, double and bytes spelled out: {"$long": "5"}).
//
//   node cli_caller.js --bin BUILD/bin/wheelbeat-dubbo --target dubbo://127.0.0.1:P/IFACE
//
// stdout: one JSON line {calls, ok, mismatches: [...], leftOut: [...]}; exit status 1 on any mismatch.
const { spawnSync } = require('child_process');
const { cases, text } = require('./matrix');
const { show, flags } = require('./check');

const opts = flags(process.argv.slice(2), { bin: '', target: '' });
if (!opts.bin || !opts.target) {
  console.error('--bin and --target are required');
  process.exit(2);
}

const javaType = { int: 'int', long: 'long', double: 'double', boolean: 'boolean',
  string: 'java.lang.String', bytes: 'byte[]', list: 'java.util.List', map: 'java.util.Map',
  date: 'java.lang.Object' };

// A case's argument in the tool's typed JSON, and the stdout expected back.
function typedJson(c) {
  switch (c.type) {
    case 'long': return { $long: c.value };
    case 'double': return { $double: String(c.value) };
    case 'bytes': return { $bytes: c.value.toString('base64') };
    case 'date': return { $date: c.value };
    default: return c.value;
  }
}

// dubbo.ts's provider decodes each socket read on its own (no reassembly): a request that
// arrives in two reads is dropped and the process dies on the answer (context.js: this.req is
// undefined). Values whose request may exceed one read (> 32 KiB) are left out, and named.
const kOneRead = 32 * 1024;
const fits = (c) => Buffer.byteLength(JSON.stringify(typedJson(c))) < kOneRead;

// One call: { method, types, args (typed JSON array), stdout, status, stderr (a pattern) }.
const calls = cases.filter(fits).map((c) => ({ name: c.name, method: c.method, types: javaType[c.type],
  args: [typedJson(c)], stdout: JSON.stringify(typedJson(c)), status: 0 }));
// echo(Object): what survives hessian.js's decoding (a string, a boolean, an int, a list, a map,
// a date) comes back as it went.
for (const v of [text(100), true, 262143, [1, ['a', null]], { k: [false] },
  { $date: 1700000000000 }])
  calls.push({ name: `echo(${show(v)})`, method: 'echo', types: 'java.lang.Object', args: [v],
    stdout: JSON.stringify(v), status: 0 });
// fail(String): dubbo.ts answers a thrown error with status 70 (service error); the tool exits 3
// and names the status.
calls.push({ name: 'fail(boom)', method: 'fail', types: 'java.lang.String', args: ['boom'],
  stdout: '', status: 3, stderr: 'status 70 (service-error)' });

const summary = { calls: 0, ok: 0, mismatches: [],
  leftOut: cases.filter((c) => !fits(c)).map((c) => c.name) };
for (const c of calls) {
  summary.calls++;
  const r = spawnSync(opts.bin, ['call', opts.target, c.method, '--types', c.types, '--args',
    JSON.stringify(c.args), '--timeout-ms', '5000'], { encoding: 'utf8' });
  const stdout = r.stdout.replace(/\n$/, '');
  if (stdout === c.stdout && r.status === c.status && (!c.stderr || r.stderr.includes(c.stderr)))
    summary.ok++;
  else
    summary.mismatches.push({ case: c.name, status: r.status, expectedStatus: c.status,
      stdout: show(stdout), expected: show(c.stdout), stderr: r.stderr.trim().slice(0, 200) });
}
console.log(JSON.stringify(summary));
process.exit(summary.mismatches.length === 0 ? 0 : 1);
