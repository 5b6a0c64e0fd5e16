// wheelbeat_netty_bench's command line, the options of wheelbeat_bench that make sense here:
// --scenario S1,S5 (or --scenario=S1,S5), --reps N, --warmup N, --quick, --help; --impl is
// accepted and ignored so that make bench can pass wheelbeat_bench's ARGS to both programs.
// A bad value is a UsageError naming the option, the value and what was expected.
package wheelbeat.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

final class Cli {
  private Cli() {}

  // The plan, or null for --help.
  static NettyWheelBench.Plan parse(String[] argv) throws NettyWheelBench.UsageError {
    List<String> args = new ArrayList<>();
    for (String a : argv) {
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        args.add(a.substring(0, eq));
        args.add(a.substring(eq + 1));
      } else {
        args.add(a);
      }
    }
    String scenarios = "";
    Integer reps = null;
    Integer warmup = null;
    boolean quick = false;
    for (int i = 0; i < args.size(); ++i) {
      String opt = args.get(i);
      switch (opt) {
        case "-h", "--help" -> { return null; }
        case "--quick" -> quick = true;
        case "--scenario" -> scenarios = value(args, ++i, opt);
        case "--reps" -> reps = count(value(args, ++i, opt), opt, 1);
        case "--warmup" -> warmup = count(value(args, ++i, opt), opt, 0);
        case "--impl" -> value(args, ++i, opt);
        default -> throw new NettyWheelBench.UsageError("unknown option '" + opt + "'");
      }
    }
    return new NettyWheelBench.Plan(scenarios(scenarios), reps != null ? reps : quick ? 1 : 5,
        warmup != null ? warmup : quick ? 0 : 3, quick);
  }

  static String value(List<String> args, int i, String opt) throws NettyWheelBench.UsageError {
    if (i >= args.size()) throw new NettyWheelBench.UsageError(opt + ": a value is required");
    return args.get(i);
  }

  static int count(String v, String opt, int min) throws NettyWheelBench.UsageError {
    try {
      int n = Integer.parseInt(v);
      if (n >= min) return n;
    } catch (NumberFormatException e) {
      // reported below, with what was expected
    }
    throw new NettyWheelBench.UsageError(
        opt + ": '" + v + "' (expected an integer >= " + min + ")");
  }

  // "S1,S5" as scenarios, in order; empty: all of them.
  static List<NettyWheelBench.Scenario> scenarios(String list) throws NettyWheelBench.UsageError {
    if (list.isEmpty()) return NettyWheelBench.SCENARIOS;
    List<NettyWheelBench.Scenario> out = new ArrayList<>();
    for (String id : list.split(",", -1)) {
      NettyWheelBench.Scenario found = NettyWheelBench.SCENARIOS.stream()
          .filter(s -> s.id().equals(id)).findFirst().orElse(null);
      if (found == null) {
        String ids = NettyWheelBench.SCENARIOS.stream().map(NettyWheelBench.Scenario::id)
            .collect(Collectors.joining(", "));
        throw new NettyWheelBench.UsageError("--scenario: '" + id + "' (expected: " + ids
            + " or a comma-separated list of them)");
      }
      out.add(found);
    }
    return out;
  }
}
