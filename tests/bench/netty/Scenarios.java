// S1-S7 on Netty 4.1.48's HashedWheelTimer, written to the definitions of the C++ scenarios
// (tests/bench/scenarios_schedule.cpp, scenarios_memory.cpp, scenarios_firing.cpp): the same
// counts, delays, tick durations, wheel size (512, both libraries' default), the same clock
// (System.nanoTime() is CLOCK_MONOTONIC, as steady_clock), and the same thing timed. Where the JVM
// forces a difference, the comment at the scenario says which and why.
package wheelbeat.bench;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

final class Scenarios {
  private Scenarios() {}

  static final long MS = 1_000_000L;
  static final long S = 1000 * MS;
  static final long FIRE_GRACE_NS = 30 * S; // how long past the last deadline before giving up
  static final TimerTask NO_OP = timeout -> {}; // one shared instance, as the C++ inline no-op

  // What one repetition is run with (RunParams of scenarios.h).
  record Params(int n, boolean quick, boolean warmup, long seed) {}

  // A started HashedWheelTimer and its worker thread (for S7's per-thread CPU).
  static final class Timer {
    final HashedWheelTimer wheel;
    Thread worker;

    Timer(long tickNs) {
      wheel = new HashedWheelTimer(r -> {
        worker = new Thread(r, "worker");
        return worker;
      }, tickNs, TimeUnit.NANOSECONDS, 512);
      wheel.start(); // construction and start stay out of every timing, as in the C++ Impl(tick)
    }

    Timeout schedule(TimerTask task, long delayNs) {
      return wheel.newTimeout(task, delayNs, TimeUnit.NANOSECONDS);
    }
  }

  static double nsPerOp(long wallNs, long n) {
    return (double) wallNs / n;
  }

  // Stops the timer and checks that every scheduled timeout was still pending, when no deadline
  // can have passed yet (a very slow run skips the check).
  static void stopExpectingAllPending(Timer t, long n, long startNs, long minDelayNs,
      String label) {
    long pending = t.wheel.pendingTimeouts();
    int unrun = t.wheel.stop().size();
    if (System.nanoTime() - startNs >= minDelayNs) return;
    Workload.require(pending == n, label + ": pending " + pending + " after scheduling " + n);
    Workload.require(unrun == n, label + ": stop() returned " + unrun + " of " + n + " pending");
  }

  // S1: tick 100 ms, delays 1-60 s; wall time of the scheduling loop / N.
  static Map<String, Double> s1(Params p) {
    long[] delays = Workload.makeDelays(p.n(), S, 60 * S, p.seed());
    Timer t = new Timer(100 * MS);
    long gc0 = Workload.gcMillis();
    long start = System.nanoTime();
    for (long d : delays) t.schedule(NO_OP, d);
    long wall = System.nanoTime() - start;
    long gc = Workload.gcMillis() - gc0;
    stopExpectingAllPending(t, p.n(), start, S, "S1");
    return Workload.metrics("ns_per_op", nsPerOp(wall, p.n()), "gc_ms", gc);
  }

  // S2: N (newTimeout + cancel) pairs. Netty's cancel() only marks the timeout and queues it for
  // the worker, which removes it (and lowers pendingTimeouts()) at its next tick: the check that
  // nothing is left pending therefore waits for that tick, outside the timed loop.
  static Map<String, Double> s2(Params p) throws InterruptedException {
    long[] delays = Workload.makeDelays(p.n(), S, 60 * S, p.seed());
    Timer t = new Timer(100 * MS);
    long wins = 0;
    long gc0 = Workload.gcMillis();
    long start = System.nanoTime();
    for (long d : delays) wins += t.schedule(NO_OP, d).cancel() ? 1 : 0;
    long wall = System.nanoTime() - start;
    long gc = Workload.gcMillis() - gc0;
    Workload.require(wins == p.n(), "S2: " + wins + " of " + p.n() + " cancels won");
    long deadline = System.nanoTime() + 10 * S;
    while (t.wheel.pendingTimeouts() != 0 && System.nanoTime() < deadline) Thread.sleep(1);
    Workload.require(t.wheel.pendingTimeouts() == 0,
        "S2: pending " + t.wheel.pendingTimeouts() + " 10 s after cancelling all");
    Workload.require(t.wheel.stop().isEmpty(), "S2: stop() returned cancelled timeouts");
    return Workload.metrics("ns_per_pair", nsPerOp(wall, p.n()), "gc_ms", gc);
  }

  // S3: 2 threads x N/2 released by a barrier; (last end - first start) / N.
  static Map<String, Double> s3(Params p) throws Exception {
    final int threads = 2;
    Timer t = new Timer(100 * MS);
    CyclicBarrier sync = new CyclicBarrier(threads);
    long[] startNs = new long[threads];
    long[] endNs = new long[threads];
    Throwable[] error = new Throwable[threads];
    Thread[] producers = new Thread[threads];
    for (int i = 0; i < threads; ++i) {
      final int k = i;
      final long[] delays = Workload.makeDelays(p.n() / threads, S, 60 * S, p.seed() + i);
      producers[i] = new Thread(() -> {
        try {
          sync.await();
          startNs[k] = System.nanoTime();
          for (long d : delays) t.schedule(NO_OP, d);
          endNs[k] = System.nanoTime();
        } catch (Throwable e) {
          error[k] = e;
        }
      }, "producer-" + i);
    }
    long gc0 = Workload.gcMillis();
    for (Thread th : producers) th.start();
    for (Thread th : producers) th.join(); // join: the arrays' writes are visible from here on
    long gc = Workload.gcMillis() - gc0;
    for (Throwable e : error) {
      if (e != null) throw new IllegalStateException("S3 producer failed", e);
    }
    long first = Math.min(startNs[0], startNs[1]);
    long last = Math.max(endNs[0], endNs[1]);
    stopExpectingAllPending(t, (long) p.n() / threads * threads, first, S, "S3");
    return Workload.metrics("ns_per_op", nsPerOp(last - first, p.n()), "gc_ms", gc);
  }

  // S6: process CPU while the main thread sleeps for the window, N pending (delays 10-20 min,
  // tick 1 ms), the window opened after a settle pause. The JVM's own threads (JIT, GC) count, as
  // any thread of the C++ process does; the warm-up rounds let the JIT finish beforehand.
  static Map<String, Double> s6(Params p) throws IOException, InterruptedException {
    long settle = p.quick() ? 50 * MS : S;
    long window = p.quick() ? 200 * MS : p.warmup() ? S : 10 * S;
    long[] delays = Workload.makeDelays(p.n(), 600 * S, 1200 * S, p.seed());
    Timer t = new Timer(MS);
    for (long d : delays) t.schedule(NO_OP, d);
    TimeUnit.NANOSECONDS.sleep(settle);
    long cpu0 = Workload.processCpuNs();
    long t0 = System.nanoTime();
    TimeUnit.NANOSECONDS.sleep(window);
    long cpu1 = Workload.processCpuNs();
    long wall = System.nanoTime() - t0;
    int unrun = t.wheel.stop().size();
    Workload.require(unrun == p.n(), "S6: stop() returned " + unrun + " of " + p.n() + " pending");
    return Workload.metrics("cpu_pct", 100.0 * (cpu1 - cpu0) / wall, "window_ms", wall / 1e6);
  }
}
