// S5 (lateness) and S7 (firing cost) on Netty's HashedWheelTimer: tick 1 ms, every timeout
// fires, and each one is checked to have fired exactly once (tests/bench/scenarios_firing.cpp).
package wheelbeat.bench;

import static wheelbeat.bench.Scenarios.FIRE_GRACE_NS;
import static wheelbeat.bench.Scenarios.MS;

import io.netty.util.TimerTask;
import java.util.Arrays;
import java.util.Map;

final class Firing {
  private Firing() {}

  static void requireAllFired(boolean allFired, Workload.FireCounter c, long n, String label) {
    Workload.require(allFired, label + ": only " + c.count() + " of " + n
        + " timeouts fired within " + FIRE_GRACE_NS / 1_000_000_000L + " s of the last deadline");
  }

  // The schedule time is read right before each call, the fire time first thing in the task, both
  // on System.nanoTime(): lateness = fire - (schedule + delay). Netty reads its own clock inside
  // newTimeout(), after ours, so a negative value can only mean a truly early fire.
  static Map<String, Double> s5(Scenarios.Params p) throws InterruptedException {
    long maxDelay = p.quick() ? 100 * MS : 1000 * MS;
    long[] delays = Workload.makeDelays(p.n(), 10 * MS, maxDelay, p.seed());
    long[] scheduledNs = new long[p.n()];
    long[] fireNs = new long[p.n()];
    int[] fires = new int[p.n()];
    Workload.FireCounter counter = new Workload.FireCounter(p.n());
    Scenarios.Timer t = new Scenarios.Timer(MS);
    for (int i = 0; i < p.n(); ++i) {
      final int k = i;
      scheduledNs[i] = System.nanoTime();
      t.schedule(timeout -> {
        fireNs[k] = System.nanoTime();
        ++fires[k];
        counter.onFire();
      }, delays[i]);
    }
    requireAllFired(counter.waitAll(maxDelay + FIRE_GRACE_NS), counter, p.n(), "S5");
    t.wheel.stop(); // joins the worker: its writes to the arrays are visible from here on
    for (int i = 0; i < p.n(); ++i) {
      Workload.require(fires[i] == 1, "S5: timeout #" + i + " fired " + fires[i] + " times");
    }
    Workload.require(counter.count() == p.n(),
        "S5: " + counter.count() + " fires for " + p.n() + " timeouts");
    double[] ms = new double[p.n()];
    for (int i = 0; i < p.n(); ++i) ms[i] = (fireNs[i] - (scheduledNs[i] + delays[i])) / 1e6;
    Arrays.sort(ms);
    return Workload.metrics("p50_ms", Workload.percentileSorted(ms, 0.50),
        "p99_ms", Workload.percentileSorted(ms, 0.99),
        "p999_ms", Workload.percentileSorted(ms, 0.999), "max_ms", ms[ms.length - 1],
        "min_ms", ms[0]);
  }

  // S7: delays 100-200 ms, tick 1 ms. Netty does everything of a timeout's life after newTimeout()
  // (drain the submission queue, place in a bucket, walk, fire, run the task) on its one worker
  // thread, so the timer's CPU is that thread's (ThreadMXBean), read before the first newTimeout()
  // and once the last task ran. (The C++ scenario takes process CPU minus the scheduling
  // thread's; here that would add the JVM's JIT and GC threads.) fire_window_ms: first fire to
  // last fire, wall time.
  static Map<String, Double> s7(Scenarios.Params p) throws InterruptedException {
    long[] delays = Workload.makeDelays(p.n(), 100 * MS, 200 * MS, p.seed());
    Workload.FireCounter counter = new Workload.FireCounter(p.n());
    Scenarios.Timer t = new Scenarios.Timer(MS);
    TimerTask fire = timeout -> counter.onFire(); // one instance: no allocation in the loop
    long cpu0 = Workload.threadCpuNs(t.worker);
    for (long d : delays) t.schedule(fire, d);
    requireAllFired(counter.waitAll(200 * MS + FIRE_GRACE_NS), counter, p.n(), "S7");
    long cpu = Workload.threadCpuNs(t.worker) - cpu0;
    t.wheel.stop();
    Workload.require(counter.count() == p.n(),
        "S7: " + counter.count() + " fires for " + p.n() + " timeouts");
    Workload.require(cpu > 0, "S7: no CPU time measured for the worker thread");
    return Workload.metrics("fired_per_s", p.n() / (cpu / 1e9), "timer_cpu_ms", cpu / 1e6,
        "worker_cpu_ns_per_timeout", (double) cpu / p.n(),
        "fire_window_ms", (counter.lastFireNs() - counter.firstFireNs()) / 1e6);
  }
}
