// S4 on Netty's HashedWheelTimer: memory per pending timeout, N pending with delays 10-20 min,
// tick 100 ms, each repetition in a fresh JVM (as the C++ scenario runs each in a fresh process).
//
// The JVM caveat: a Java process's RSS is mostly its heap, which the JVM reserves up front and
// touches as it allocates; it grows with garbage as well as with live objects, and does not shrink
// when they die. So two figures are taken around the scheduling:
//   rss_bytes_per_timeout   VmRSS growth (the C++ method, read 200 ms after scheduling): what the
//                           machine paid, including young-generation garbage and GC copies;
//   heap_bytes_per_timeout  growth of the heap's used bytes, each read after a forced full GC
//                           (System.gc(); the harness runs with -Xms = -Xmx and G1, where that is a
//                           full, compacting collection): the live bytes a timeout keeps.
// The child JVM takes this one's options except -XX:+AlwaysPreTouch.
package wheelbeat.bench;

import static wheelbeat.bench.Scenarios.MS;
import static wheelbeat.bench.Scenarios.NO_OP;
import static wheelbeat.bench.Scenarios.S;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

final class Memory {
  private Memory() {}

  static long liveHeapBytes() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  // The measurement in the child JVM (hidden flag --s4-child N SEED): prints "RSS HEAP", the two
  // per-timeout figures, on stdout.
  static int childMain(int n, long seed) throws Exception {
    long[] delays = Workload.makeDelays(n, 600 * S, 1200 * S, seed);
    Scenarios.Timer t = new Scenarios.Timer(100 * MS);
    long heap0 = liveHeapBytes();
    long rss0 = Workload.vmRssBytes();
    for (long d : delays) t.schedule(NO_OP, d);
    Thread.sleep(n >= 100_000 ? 200 : 20); // the worker takes the new timeouts in meanwhile
    long rss1 = Workload.vmRssBytes();
    long heap1 = liveHeapBytes();
    long pending = t.wheel.pendingTimeouts();
    Workload.require(pending == n, "S4: pending " + pending + " of " + n);
    int unrun = t.wheel.stop().size();
    Workload.require(unrun == n, "S4: stop() returned " + unrun + " of " + n + " pending");
    System.out.println((double) (rss1 - rss0) / n + " " + (double) (heap1 - heap0) / n);
    return 0;
  }

  // Runs childMain in a fresh JVM started with this one's options and class path.
  static Map<String, Double> s4(Scenarios.Params p) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      // A pre-touched heap is all resident from the start: VmRSS would not grow.
      if (!option.equals("-XX:+AlwaysPreTouch")) cmd.add(option);
    }
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"),
        NettyWheelBench.class.getName(), "--s4-child", Integer.toString(p.n()),
        Long.toString(p.seed())));
    Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    int status = child.waitFor();
    Workload.require(status == 0, "S4: child JVM exited with " + status);
    String[] fields = out.split(" ");
    Workload.require(fields.length == 2, "S4: unreadable child output '" + out + "'");
    return Workload.metrics("rss_bytes_per_timeout", Double.parseDouble(fields[0]),
        "heap_bytes_per_timeout", Double.parseDouble(fields[1]));
  }
}
