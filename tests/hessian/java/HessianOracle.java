// The Java oracle of the hessian tests: Java's Hessian 4.0 (Debian's libhessian-java) on the
// same matrix of values as wheelbeat. Reads lines "name hex" (wheelbeat's bytes for the value the
// name describes: the recipes of tests/hessian/matrix.cpp), and prints for each
// "name javaHex OK" when Java decodes wheelbeat's bytes to the value it builds itself, or
// "name javaHex FAIL why".
import com.caucho.hessian.io.Hessian2Input;
import com.caucho.hessian.io.Hessian2Output;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileReader;
import java.io.Serializable;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

public class HessianOracle {
  public static class Point implements Serializable {
    private static final long serialVersionUID = 1L;
    public String label;
    public int x;
    public Object next;
    public long y;

    Point(String label, int x, long y, Object next) {
      this.label = label;
      this.x = x;
      this.y = y;
      this.next = next;
    }
  }

  public enum Color { RED, GREEN }

  static String patternString(int units, String kind) {
    String[] cycle;
    switch (kind) {
      case "ascii":
        cycle = new String[] {"a", "b", "c"};
        break;
      case "two":
        cycle = new String[] {"\u00e9"};
        break;
      case "three":
        cycle = new String[] {"\u4e2d"};
        break;
      case "pair":
        cycle = new String[] {"\ud83d\ude00", "a"};
        break;
      case "mixed":
        cycle = new String[] {"a", "\u00e9", "\u4e2d", "\ud83d\ude00"};
        break;
      default:
        throw new IllegalArgumentException(kind);
    }
    StringBuilder s = new StringBuilder();
    for (int i = 0; s.length() < units; ++i) {
      String c = cycle[i % cycle.length];
      s.append(s.length() + c.length() > units ? "a" : c);
    }
    return s.toString();
  }

  static Object scalar(String kind, String arg) {
    switch (kind) {
      case "null":
        return null;
      case "bool":
        return Boolean.valueOf(arg);
      case "int":
        return Integer.valueOf(arg);
      case "long":
        return Long.valueOf(arg);
      case "double":
        return Double.valueOf(arg);
      case "date":
        return new Date(Long.parseLong(arg));
      case "bytes": {
        byte[] b = new byte[Integer.parseInt(arg)];
        for (int i = 0; i < b.length; ++i) b[i] = (byte) (i % 251);
        return b;
      }
      case "string": {
        String[] p = arg.split(":");
        return patternString(Integer.parseInt(p[0]), p[1]);
      }
      default:
        throw new IllegalArgumentException("no recipe " + kind);
    }
  }

  static ArrayList<Object> list(Object... items) {
    return new ArrayList<>(Arrays.asList(items));
  }

  static Object build(String name) {
    int colon = name.indexOf(':');
    String kind = colon < 0 ? name : name.substring(0, colon);
    String arg = colon < 0 ? "" : name.substring(colon + 1);
    if (!kind.equals("list") && !kind.equals("map") && !kind.equals("object")
        && !kind.equals("enum")) {
      return scalar(kind, arg);
    }
    switch (name) {
      case "list:empty":
        return list();
      case "list:seven":
        return list(1, 2, 3, 4, 5, 6, 7);
      case "list:eight":
        return list(1, 2, 3, 4, 5, 6, 7, 8);
      case "list:intarray":
        return new int[] {1, 2, 3};
      case "list:intarray8":
        return new int[] {1, 2, 3, 4, 5, 6, 7, 8};
      case "list:strarray":
        return new String[] {"a", "b"};
      case "list:linked":
        return new LinkedList<Object>(Arrays.asList(1, 2));
      case "list:nested":
        return list(list(1), new int[] {1}, new int[] {2}, null, 5L);
      case "list:mixed":
        return list(null, true, 1, 2L, 3.5, "s", new byte[] {1, 2}, new Date(60000));
      case "list:selfref": {
        ArrayList<Object> self = list();
        self.add(self);
        return self;
      }
      case "map:empty":
        return new HashMap<Object, Object>();
      case "map:intkeys":
        return hashMap(1, "a", 2, "b", 3, "c");
      case "map:longkeys":
        return hashMap(1L, "x", 2L, "y");
      case "map:nullkey": {
        LinkedHashMap<Object, Object> m = new LinkedHashMap<>();
        m.put(null, 1);
        m.put(2L, "x");
        m.put("k", list(1));
        return m;
      }
      case "map:nested":
        return hashMap(1, hashMap(2, 3));
      case "map:typedtwice":
        return list(linked(1, 1), linked(2, 2));
      case "map:selfref": {
        HashMap<Object, Object> m = new HashMap<>();
        m.put(1, m);
        return m;
      }
      case "object:point":
        return new Point("p", 1, 2, null);
      case "object:self": {
        Point p = new Point("self", 3, 4, null);
        p.next = p;
        return p;
      }
      case "object:shared": {
        Point q = new Point("q", 5, 6, null);
        Point p = new Point("p", 7, 8, q);
        return list(p, p, q);
      }
      case "object:chain":
        return new Point("a", 48, -9, new Point("b", -16, 262144, new Point("c", 0, -1, null)));
      case "enum:red":
        return Color.RED;
      case "enum:list":
        return new Object[] {Color.RED, Color.GREEN, Color.RED};
      default:
        throw new IllegalArgumentException("no recipe " + name);
    }
  }

  static HashMap<Object, Object> hashMap(Object... kv) {
    HashMap<Object, Object> m = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return m;
  }

  static LinkedHashMap<Object, Object> linked(Object k, Object v) {
    LinkedHashMap<Object, Object> m = new LinkedHashMap<>();
    m.put(k, v);
    return m;
  }

  // Deep equality with the same shape of sharing: a node met again must pair as before.
  static String diff(Object a, Object b, IdentityHashMap<Object, Object> pairs) throws Exception {
    if (a == null || b == null)
      return a == b ? null : "null vs " + (a == null ? b : a);
    if (a.getClass() != b.getClass())
      return a.getClass() + " vs " + b.getClass();
    if (a instanceof String || a instanceof Number || a instanceof Boolean || a instanceof Date
        || a instanceof Enum) {
      return a.equals(b) ? null : a + " vs " + b;
    }
    if (pairs.containsKey(a))
      return pairs.get(a) == b ? null : "sharing differs";
    pairs.put(a, b);
    if (a.getClass().isArray()) {
      if (Array.getLength(a) != Array.getLength(b))
        return "array lengths differ";
      for (int i = 0; i < Array.getLength(a); ++i) {
        String d = diff(Array.get(a, i), Array.get(b, i), pairs);
        if (d != null)
          return "[" + i + "] " + d;
      }
      return null;
    }
    if (a instanceof List)
      return diffIterators(((List<?>) a).iterator(), ((List<?>) b).iterator(), pairs);
    if (a instanceof Map) {
      return diffIterators(
          ((Map<?, ?>) a).entrySet().iterator(), ((Map<?, ?>) b).entrySet().iterator(), pairs);
    }
    if (a instanceof Map.Entry) {
      String d = diff(((Map.Entry<?, ?>) a).getKey(), ((Map.Entry<?, ?>) b).getKey(), pairs);
      return d != null
          ? d
          : diff(((Map.Entry<?, ?>) a).getValue(), ((Map.Entry<?, ?>) b).getValue(), pairs);
    }
    if (a instanceof Point) {
      Point p = (Point) a;
      Point q = (Point) b;
      if (!Objects.equals(p.label, q.label) || p.x != q.x || p.y != q.y)
        return "point fields differ";
      return diff(p.next, q.next, pairs);
    }
    return "unexpected class " + a.getClass();
  }

  static String diffIterators(Iterator<?> a, Iterator<?> b, IdentityHashMap<Object, Object> pairs)
      throws Exception {
    for (int i = 0; a.hasNext() || b.hasNext(); ++i) {
      if (a.hasNext() != b.hasNext())
        return "sizes differ";
      String d = diff(a.next(), b.next(), pairs);
      if (d != null)
        return "#" + i + " " + d;
    }
    return null;
  }

  static String hex(byte[] bytes) {
    StringBuilder sb = new StringBuilder(bytes.length * 2);
    for (byte b : bytes)
      sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
    return sb.toString();
  }

  static byte[] unhex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; ++i)
      b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return b;
  }

  public static void main(String[] args) throws Exception {
    try (BufferedReader in = new BufferedReader(new FileReader(args[0]))) {
      for (String line; (line = in.readLine()) != null;) {
        String[] parts = line.split(" ");
        Object value = build(parts[0]);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Hessian2Output out = new Hessian2Output(bytes);
        out.writeObject(value);
        out.flush();
        String verdict;
        try {
          Hessian2Input input =
              new Hessian2Input(new ByteArrayInputStream(unhex(parts.length > 1 ? parts[1] : "")));
          String d = diff(value, input.readObject(), new IdentityHashMap<>());
          verdict = d == null ? "OK" : "FAIL " + d;
        } catch (Exception e) {
          verdict = ("FAIL " + e).replace('\n', ' ');
        }
        System.out.println(parts[0] + " " + hex(bytes.toByteArray()) + " " + verdict);
      }
    }
  }
}
