'use strict';
// What the Node consumers share: the Hessian type of an answer read from its first byte on the
// wire, and the comparison of a decoded answer with a matrix case (matrix.js).

// The Hessian 2.0 type of the value whose first byte is `code` (hessian-serialization, "Bytecode
// map"); the JS libraries decode int, long and double all to numbers, so only the wire tells.
function wireType(code) {
  if ((code >= 0x80 && code <= 0xd7) || code === 0x49) return 'int';
  if (code >= 0xd8 || (code >= 0x38 && code <= 0x3f) || code === 0x59 || code === 0x4c) return 'long';
  if ((code >= 0x5b && code <= 0x5f) || code === 0x44) return 'double';
  if (code === 0x54 || code === 0x46) return 'boolean';
  if (code <= 0x1f || (code >= 0x30 && code <= 0x33) || code === 0x52 || code === 0x53)
    return 'string';
  if ((code >= 0x20 && code <= 0x2f) || (code >= 0x34 && code <= 0x37) || code === 0x41 ||
    code === 0x42)
    return 'bytes';
  if ((code >= 0x55 && code <= 0x58) || (code >= 0x70 && code <= 0x7f)) return 'list';
  if (code === 0x48 || code === 0x4d) return 'map';
  if (code === 0x4a || code === 0x4b) return 'date';
  if (code === 0x4e) return 'null';
  return `0x${code.toString(16)}`;
}

// The type of the value in a Dubbo 2 response frame (16-byte header, then the body: the flag as a
// one-byte compact int 0x90..0x95, then the value); null when the frame carries no value.
function responseWireType(frame) {
  if (frame.length < 18 || frame[3] !== 20) return null;
  const flag = frame[16] - 0x90;
  if (flag !== 1 && flag !== 4) return null;
  return wireType(frame[17]);
}

function deepEqual(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b))
    return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
}

// Whether `got` (as the library decoded it) equals the case's value. Longs: hessian.js gives a
// number within 2^53 and a decimal string beyond; BigInt and Long objects compare by text.
function sameValue(c, got) {
  switch (c.type) {
    case 'long':
      return (typeof got === 'number' || typeof got === 'string' || typeof got === 'bigint' ||
        (got !== null && typeof got === 'object' && typeof got.toString === 'function' &&
          !Array.isArray(got))) && String(got) === c.value;
    case 'double':
      if (c.value === 'NaN') return Number.isNaN(got);
      return got === Number(c.value);
    case 'date':
      return got instanceof Date && got.getTime() === c.value;
    case 'int':
    case 'boolean':
    case 'string':
      return got === c.value;
    default:
      return deepEqual(got, c.value);
  }
}

// A short printable form of a value for mismatch reports.
function show(v) {
  if (Buffer.isBuffer(v)) return `<${v.length} bytes>`;
  if (typeof v === 'string' && v.length > 40) return `<string of ${v.length} units>`;
  if (typeof v === 'bigint') return `${v}n`;
  let s;
  try {
    s = JSON.stringify(v);
  } catch (e) {
    s = String(v);
  }
  if (s === undefined) s = String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

// Parses `--name value` flags into an object; `defaults` names the known ones.
function flags(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, '');
    if (!(name in defaults) || i + 1 >= argv.length) {
      console.error(`unknown flag or missing value: ${argv[i]} (known: ${Object.keys(defaults)})`);
      process.exit(2);
    }
    out[name] = argv[i + 1];
  }
  return out;
}

// The argument of a case in js-to-java's form (the $class gives the descriptor dubbo2.js sends).
function argument(c) {
  const java = require('js-to-java');
  switch (c.type) {
    case 'int': return java.int(c.value);
    case 'long': return java.long(c.value);
    case 'double': return java.double(Number(c.value));
    case 'boolean': return java.boolean(c.value);
    case 'string': return java.String(c.value);
    case 'bytes': return { $class: '[byte', $: c.value };
    case 'list': return java.List(c.value);
    case 'map': return java.Map(c.value);
    case 'date': return { $class: 'java.lang.Object', $: new Date(c.value) };
    default: throw new Error(`matrix type ${c.type}`);
  }
}

module.exports = { wireType, responseWireType, sameValue, show, flags, argument };
