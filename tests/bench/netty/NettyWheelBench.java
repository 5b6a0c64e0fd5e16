// wheelbeat_netty_bench: the wheel benchmark's scenarios S1-S7 on Netty 4.1.48's
// HashedWheelTimer, so that `make bench` compares wheelbeat with Netty measured in the same run.
//   wheelbeat_netty_bench [--scenario S1,S5] [--reps N] [--warmup N] [--quick]
// JSON lines on stdout: a header, then one line per scenario in the shape of wheelbeat_bench's
// ({"scenario":"S1","impl":"netty",<metrics>,"reps":5,"n":1000000,"warmup":3}); progress and
// errors on stderr. Exit status: 0 done, 1 a run failed, 2 bad usage.
package wheelbeat.bench;

import io.netty.util.Version;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

public final class NettyWheelBench {
  private NettyWheelBench() {}

  interface Run {
    Map<String, Double> run(Scenarios.Params p) throws Exception;
  }

  // Sizes as tests/bench/scenarios.cpp; `warms` says whether warm-up rounds help (S4 measures
  // memory, each repetition in a fresh JVM: there is nothing to warm).
  record Scenario(String id, int n, int quickN, boolean warms, Run run) {}

  static final List<Scenario> SCENARIOS = List.of(
      new Scenario("S1", 1_000_000, 20_000, true, Scenarios::s1),
      new Scenario("S2", 1_000_000, 20_000, true, Scenarios::s2),
      new Scenario("S3", 1_000_000, 20_000, true, Scenarios::s3),
      new Scenario("S4", 1_000_000, 20_000, false, Memory::s4),
      new Scenario("S5", 100_000, 2_000, true, Firing::s5),
      new Scenario("S6", 1_000_000, 20_000, true, Scenarios::s6),
      new Scenario("S7", 1_000_000, 20_000, true, Firing::s7));

  static final String USAGE = String.join("\n",
      "usage: wheelbeat_netty_bench [--scenario S1,S2,...] [--reps N] [--warmup N] [--quick]",
      "       wheelbeat_netty_bench --help | --version",
      "",
      "wheelbeat_bench's scenarios S1-S7 on Netty's HashedWheelTimer: one JSON line per scenario",
      "on stdout, progress on stderr. Exit status: 0 done, 1 a run failed, 2 bad usage.",
      "",
      "  --scenario LIST  the scenarios to run, comma-separated (default: all)",
      "  --reps N         repetitions per scenario, the median kept (default 5, 1 with --quick)",
      "  --warmup N       untimed full-size rounds first, for the JIT (default 3, 0 with --quick)",
      "  --quick          tiny sizes, one repetition, no warm-up: a smoke run",
      "  --impl IMPL      accepted and ignored (make bench passes wheelbeat_bench's ARGS here)");

  record Plan(List<Scenario> scenarios, int reps, int warmup, boolean quick) {}

  static final class UsageError extends Exception {
    private static final long serialVersionUID = 1L;

    UsageError(String message) {
      super(message);
    }
  }

  public static void main(String[] args) {
    try {
      if (args.length == 3 && args[0].equals("--s4-child")) {
        System.exit(Memory.childMain(Integer.parseInt(args[1]), Long.parseLong(args[2])));
      }
      if (java.util.Arrays.asList(args).contains("--version")) {
        // The wrapper passes the project's version (CMake's PROJECT_VERSION).
        System.out.println("wheelbeat_netty_bench " + System.getProperty("wheelbeat.version"));
        return;
      }
      Plan plan = Cli.parse(args);
      if (plan == null) {
        System.out.println(USAGE);
        return;
      }
      runAll(plan);
    } catch (UsageError e) {
      System.err.println("wheelbeat_netty_bench: " + e.getMessage() + "\n" + USAGE);
      System.exit(2);
    } catch (Exception e) {
      System.err.println("wheelbeat_netty_bench: FAILED: " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  static void runAll(Plan plan) throws Exception {
    long start = System.nanoTime();
    System.out.println(header());
    long seedBase = 0;
    for (Scenario s : plan.scenarios()) {
      seedBase += 1000;
      System.out.println(resultLine(s, plan, runScenario(s, plan, seedBase)));
      System.out.flush();
    }
    System.err.printf("wheelbeat_netty_bench: done in %.1f s%n", (System.nanoTime() - start) / 1e9);
    System.exit(System.out.checkError() ? 1 : 0);
  }

  // The warm-up rounds (full size, results discarded), then the repetitions; per metric, the
  // median over the repetitions.
  static Map<String, Double> runScenario(Scenario s, Plan plan, long seedBase) throws Exception {
    int n = plan.quick() ? s.quickN() : s.n();
    int warmup = s.warms() ? plan.warmup() : 0;
    List<Map<String, Double>> reps = new ArrayList<>();
    for (int round = 1; round <= warmup + plan.reps(); ++round) {
      boolean warm = round <= warmup;
      // Each round starts with an empty young generation, big enough for the whole round (JVM
      // options: wheelbeat_netty_bench.in), so no collection runs inside a timed loop. (The last
      // round's timer has a finalizer: it and what stop() returned move to the old generation
      // and go one collection later.)
      System.gc();
      Scenarios.Params params = new Scenarios.Params(n, plan.quick(), warm, seedBase + round);
      Map<String, Double> m = s.run().run(params);
      String which = warm ? "warm-up " + round + "/" + warmup
                          : "rep " + (round - warmup) + "/" + plan.reps();
      System.err.printf("[%s     netty] %s %s%n", s.id(), which, m);
      if (!warm) reps.add(m);
    }
    Map<String, Double> medians = new LinkedHashMap<>();
    for (String key : reps.get(0).keySet()) {
      medians.put(key, Workload.median(reps.stream().mapToDouble(r -> r.get(key)).toArray()));
    }
    return medians;
  }

  static String resultLine(Scenario s, Plan plan, Map<String, Double> medians) {
    StringBuilder line = new StringBuilder("{\"scenario\":\"" + s.id() + "\",\"impl\":\"netty\"");
    medians.forEach((k, v) -> line.append(",\"").append(k).append("\":").append(number(v)));
    int warmup = s.warms() ? plan.warmup() : 0;
    line.append(",\"reps\":").append(plan.reps()).append(",\"n\":")
        .append(plan.quick() ? s.quickN() : s.n()).append(",\"warmup\":").append(warmup);
    return line.append('}').toString();
  }

  static String header() {
    List<String> jvmArgs = new ArrayList<>();
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      jvmArgs.add('"' + a.replace("\\", "\\\\").replace("\"", "\\\"") + '"');
    }
    Version netty = Version.identify().get("netty-common");
    return "{\"bench\":\"netty\",\"version\":1,\"netty\":\""
        + (netty == null ? "unknown" : netty.artifactVersion()) + "\",\"jvm\":\""
        + System.getProperty("java.vm.version") + "\",\"jvm_args\":[" + String.join(",", jvmArgs)
        + "],\"definitions\":{\"same_as\":\"wheelbeat_bench's definitions (its header line), "
        + "except: delays from java.util.SplittableRandom (same distribution, not the same "
        + "sequence); warm-up: 'warmup' full-size untimed rounds before the repetitions, for the "
        + "JIT; a System.gc() before each round, whose allocations the young generation holds: "
        + "gc_ms (S1-S3) is the collectors' time inside the timed loop; S4: see "
        + "heap_bytes_per_timeout\",\"rss_bytes_per_timeout\":\"S4: VmRSS growth / "
        + "N in a fresh JVM: includes garbage not yet collected and the heap the JVM touches as "
        + "it allocates\",\"heap_bytes_per_timeout\":\"S4: growth of the heap's used bytes after "
        + "a forced full GC / N: the live bytes per pending timeout\",\"cpu_pct\":\"S6: CPU of "
        + "the whole JVM process (JIT and GC threads included) during the window\","
        + "\"worker_cpu_ns_per_timeout\":\"S7: CPU of the timer's worker thread (ThreadMXBean) "
        + "from the first newTimeout until the last task ran / N\"}}";
  }

  // As wheelbeat_bench: JSON has no NaN or infinity; integers and |v| >= 1000 print without a
  // fraction, the rest with 4 significant digits.
  static String number(double v) {
    if (!Double.isFinite(v)) return "null";
    if (Math.abs(v) >= 1000 || v == Math.floor(v)) return String.format(Locale.ROOT, "%.0f", v);
    return new BigDecimal(v).round(new MathContext(4)).stripTrailingZeros().toPlainString();
  }
}
