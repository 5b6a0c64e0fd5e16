// Workload helpers of the Netty harness, the Java twins of tests/bench/workload.h and
// proc_stats.h: pre-generated delays, a fire counter that wakes a blocked waiter, the statistics
// (median, nearest-rank percentile) and what the process costs (VmRSS, CPU of the process and of
// one thread).
package wheelbeat.bench;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

final class Workload {
  private Workload() {}

  // n delays in ns, uniform in [lo, hi], deterministic for a seed. Same distribution as the C++
  // makeDelays() (std::mt19937_64 + uniform_int_distribution), not the same sequence: the two
  // generators differ, and with 10^5-10^6 draws the difference does not show in a median.
  static long[] makeDelays(int n, long loNs, long hiNs, long seed) {
    SplittableRandom rng = new SplittableRandom(seed);
    long[] delays = new long[n];
    for (int i = 0; i < n; ++i) delays[i] = rng.nextLong(loNs, hiNs + 1);
    return delays;
  }

  // Median (mean of the two middle values for an even count). Precondition: values.length > 0.
  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int mid = v.length / 2;
    return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  }

  // Nearest-rank q-quantile (0 < q <= 1) of an ascending-sorted array.
  static double percentileSorted(double[] sorted, double q) {
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
  }

  // VmRSS of /proc/self/status, in bytes (the kernel reports kB).
  static long vmRssBytes() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        String kib = line.substring("VmRSS:".length()).trim().split("\\s+")[0];
        return Long.parseLong(kib) * 1024;
      }
    }
    throw new IOException("VmRSS not found in /proc/self/status");
  }

  // CPU of the whole JVM process (every thread: Java, JIT, GC), in ns: the sum of each live
  // thread's run time (first field of /proc/self/task/TID/schedstat, ns). Not
  // OperatingSystemMXBean.getProcessCpuTime(), whose Linux implementation counts in 10 ms clock
  // ticks (times(2)). Unlike getrusage() this misses threads that have ended: S6's window, the one
  // user, starts and ends none.
  static long processCpuNs() throws IOException {
    long ns = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
      for (Path task : tasks) {
        try {
          ns += Long.parseLong(Files.readString(task.resolve("schedstat")).split(" ")[0]);
        } catch (NoSuchFileException e) {
          // the thread ended since the directory was listed: its time is not counted
        }
      }
    }
    return ns;
  }

  // CPU of one live thread (user + system), in ns.
  static long threadCpuNs(Thread thread) {
    ThreadMXBean bean = ManagementFactory.getThreadMXBean();
    long ns = bean.getThreadCpuTime(thread.getId());
    if (ns < 0) throw new IllegalStateException("thread CPU time unavailable for " + thread);
    return ns;
  }

  // Milliseconds the JVM's collectors have spent so far (every collector, pauses and concurrent).
  static long gcMillis() {
    long ms = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      ms += Math.max(0, gc.getCollectionTime());
    }
    return ms;
  }

  // Metrics in the given order: metrics("ns_per_op", 12.5, "gc_ms", 0.0).
  static Map<String, Double> metrics(Object... keyValues) {
    Map<String, Double> m = new LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      m.put((String) keyValues[i], ((Number) keyValues[i + 1]).doubleValue());
    }
    return m;
  }

  static void require(boolean ok, String what) {
    if (!ok) throw new IllegalStateException(what);
  }

  // Counts fires from any thread. The hot path is one atomic add; the first and the expected-th
  // fire also read the clock, and the expected-th wakes waitAll() (a blocking wait, no spinning).
  static final class FireCounter {
    private final long expected;
    private final AtomicLong count = new AtomicLong();
    private volatile long firstNs;
    private volatile long lastNs;
    private boolean done; // guarded by this

    FireCounter(long expected) {
      this.expected = expected;
    }

    void onFire() {
      long k = count.incrementAndGet();
      if (k == 1) firstNs = System.nanoTime();
      if (k != expected) return;
      lastNs = System.nanoTime();
      synchronized (this) {
        done = true;
        notifyAll();
      }
    }

    // Blocks until `expected` fires or the timeout; true when all fired.
    synchronized boolean waitAll(long timeoutNs) throws InterruptedException {
      long end = System.nanoTime() + timeoutNs;
      while (!done) {
        long left = end - System.nanoTime();
        if (left <= 0) return false;
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
      return true;
    }

    long count() {
      return count.get();
    }

    // Valid once waitAll() returned true.
    long firstFireNs() {
      return firstNs;
    }

    long lastFireNs() {
      return lastNs;
    }
  }
}
