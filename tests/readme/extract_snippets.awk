# Turns every ```cpp block of the Markdown files given (README.md and docs/**/*.md) into one C++
# translation unit: the blocks' #include lines first, then each block's other lines as the body
# of its own function (snippet_N, named after its file and line), never called: the test is that
# they compile and link with -Werror.
FNR == 1 { files = files (files == "" ? "" : ", ") FILENAME }
/^```cpp[[:space:]]*$/ { inside = 1; ++n; body[n] = ""; where[n] = FILENAME ":" FNR; next }
/^```/ { inside = 0; next }
inside && /^#include/ { if (!(($0) in seen)) { seen[$0] = 1; includes = includes $0 "\n" } next }
inside { body[n] = body[n] "  " $0 "\n" }
END {
  printf "// Generated from %s by extract_snippets.awk: do not edit.\n", files
  printf "%s\n", includes
  for (i = 1; i <= n; ++i) {
    printf "// ---- snippet %d, %s\n[[maybe_unused]] static void snippet_%d() {\n%s}\n\n", i, where[i], i, body[i]
  }
  printf "int main() { return %d > 0 ? 0 : 1; }  // %d snippet(s)\n", n, n
}
