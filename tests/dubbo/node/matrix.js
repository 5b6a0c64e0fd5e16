'use strict';
// The interop type matrix: values sent to the typed echoes of org.wheelbeat.interop.Echo and
// expected back unchanged, with the same Hessian type. Library-neutral: each consumer turns a case
// into its own argument form (js-to-java wrappers, dubbo.ts's types).
//
// A case: { method, type, value } where type is the Java type of the argument and of the answer:
//   int      a JS number (a 32-bit integer)
//   long     a decimal string (exact beyond 2^53)
//   double   a JS number, or 'NaN' / 'Infinity' / '-Infinity'
//   boolean  true / false
//   string   a JS string (UTF-16 units)
//   bytes    a Buffer
//   list     a JS array of ints, strings, booleans, nulls, nested lists and maps
//   map      a JS object with string keys
//   date     milliseconds since the epoch (a java.util.Date), sent to echo(Object)
// plus `name`, which a mismatch reports.

// A string of exactly `units` UTF-16 units cycling through 1-, 2- and 3-byte UTF-8 characters and
// surrogate pairs (4 bytes in UTF-8, 2 units): the cases Hessian's length-in-units gets wrong.
function text(units) {
  const parts = ['a', '\u00e9', '\u20ac', '\ud83d\ude00', 'Z', '\u4e2d'];
  let s = '';
  for (let i = 0; s.length < units; i++) {
    const p = parts[i % parts.length];
    s += s.length + p.length <= units ? p : 'x';
  }
  return s;
}

// `length` bytes, every value 0..255 present once length >= 256.
function bytes(length) {
  const b = Buffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = (i * 31 + 7) & 0xff;
  return b;
}

const cases = [];
const add = (method, type, value, name) =>
  cases.push({ method, type, value, name: name || `${method}(${String(value).slice(0, 24)})` });

// int: the edges of Hessian's one-, two- and three-octet compact forms and the 32-bit range.
for (const v of [0, 1, -1, -16, 47, 48, -17, -2048, 2047, 2048, -2049, -262144, 262143, 262144,
  -262145, 2147483647, -2147483648])
  add('echoInt', 'int', v);
// long: the compact forms (-8/15, -2048/2047, -262144/262143), the 32-bit form, 2^53 and beyond.
for (const v of ['0', '-8', '15', '16', '-2048', '2047', '-262144', '262143', '2147483647',
  '2147483648', '-2147483649', '9007199254740991', '9007199254740993', '9223372036854775807',
  '-9223372036854775808'])
  add('echoLong', 'long', v);
// double: the compact forms (0, 1, byte, short, float-exact as 32-bit) and a full 64-bit value.
for (const v of [0, 1, 0.5, 0.001, 3.5, -128, 127, 32767, -32768, 1e300, -2.5e-300, 'NaN',
  'Infinity', '-Infinity'])
  add('echoDouble', 'double', v);
add('echoBoolean', 'boolean', true);
add('echoBoolean', 'boolean', false);
// string: the short form's edge (31 units), chunked strings (> 32768 units), multibyte units.
for (const n of [0, 1, 31, 32, 1023, 1024, 40000])
  add('echoString', 'string', text(n), `echoString(${n} units)`);
// bytes: empty, the short form (<= 15), chunked (> 8192 per chunk) and many chunks.
for (const n of [0, 15, 16, 1024, 70000]) add('echoBytes', 'bytes', bytes(n), `echoBytes(${n})`);
// lists and maps, flat and nested.
add('echoList', 'list', [], 'echoList([])');
add('echoList', 'list', [1, -2048, 'two', true, null], 'echoList(flat)');
add('echoList', 'list', [[1, [2, [3]]], { k: 'v' }, text(40)], 'echoList(nested)');
add('echoList', 'list', Array.from({ length: 300 }, (_, i) => i * 1000 - 150000),
  'echoList(300 ints)');
add('echoMap', 'map', {}, 'echoMap({})');
add('echoMap', 'map', { a: 1, b: 'two', c: false, d: null }, 'echoMap(flat)');
add('echoMap', 'map', { list: [1, 2, { x: [text(33)] }], map: { inner: { deep: 262144 } } },
  'echoMap(nested)');
// date (through echo(Object)): the millisecond form and the compact whole-minute form (0x4b),
// before and after the epoch.
for (const v of [1700000000123, 1700000040000, 0, -60000, -1])
  add('echo', 'date', v, `echo(date ${v})`);

module.exports = { cases, text, bytes };
