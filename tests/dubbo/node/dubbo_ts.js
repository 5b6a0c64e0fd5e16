'use strict';
// What the dubbo.ts (1.0.72) consumers share: an invoker of one service found through ZooKeeper.
const { Registry, Consumer } = require('dubbo.ts');

// The invoker of `service` (version '0.0.0') from the registry at `zookeeper` (HOST:PORT).
async function dubboTsInvoker(zookeeper, service, application) {
  const quiet = { info() {}, debug() {}, warn: console.error, error: console.error };
  const registry = new Registry({ host: zookeeper });
  const consumer = new Consumer({ application, dubbo_version: '2.0.2', pid: process.pid,
    registry, logger: quiet });
  await consumer.listen();
  // dubbo.ts keeps a provider only if its URL's version equals the one asked, and asks '0.0.0'
  // at least; a provider registered without a version (Dubbo's layout leaves the parameter out,
  // and dubbo2.js reads its absence as '0.0.0') is never found. Read it as '0.0.0' here.
  const children = registry.children.bind(registry);
  registry.children = async (path, watcher) => (await children(path, watcher) || []).map((u) =>
    /(%3F|%26)version%3D/.test(u) ? u : `${u}%26version%3D0.0.0`);
  return consumer.get(service, '0.0.0');
}

// A call's outcome as {res} or {err}: dubbo.ts throws on an exception or an error status.
async function call(invoker, method, arg) {
  try {
    return { res: await invoker.invoke(method, [arg]) };
  } catch (err) {
    return { err };
  }
}

module.exports = { dubboTsInvoker, call };
