#!/bin/sh
# ctest readme_service_in_a_dozen_lines: README.md's "A service in a dozen lines" is tutorial 08, which
# sample_08_runtime_service runs and scrapes. The section's ```cpp block (without its #include
# lines) must equal the tutorial's lines between "// README: begin" and "// README: end" (less
# main's two-space indent), and its ```json block must equal samples/configs/service.json.
# Usage: service_in_a_dozen_lines.sh SOURCE_DIR. Prints the difference and exits 1 when they differ.
set -eu
root=${1:?usage: service_in_a_dozen_lines.sh SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The first block of language $1 after the section's heading.
block() {
  awk -v lang="$1" '
    /^## / { inside_section = ($0 == "## A service in a dozen lines") }
    inside_section && !done && $0 == "```" lang { copying = 1; next }
    copying && /^```/ { copying = 0; done = 1; next }
    copying { print }
  ' "$root/README.md"
}
block cpp | grep -v '^#include' >"$work/readme.cpp"
block json >"$work/readme.json"
sed -n '/^  \/\/ README: begin$/,/^  \/\/ README: end$/p' \
  "$root/samples/tutorial/08_runtime_service.cpp" | sed '1d;$d' | sed 's/^  //' >"$work/tutorial.cpp"

[ -s "$work/readme.cpp" ] || { echo "README.md: no \`\`\`cpp block under '## A service in a dozen lines'"; exit 1; }
[ -s "$work/tutorial.cpp" ] || { echo "08_runtime_service.cpp: no README: begin / end lines"; exit 1; }
status=0
diff -u "$work/tutorial.cpp" "$work/readme.cpp" || { echo "README.md's service differs from tutorial 08"; status=1; }
diff -u "$root/samples/configs/service.json" "$work/readme.json" ||
  { echo "README.md's service.json differs from samples/configs/service.json"; status=1; }
[ $status -eq 0 ] && echo "README's service = tutorial 08 ($(wc -l <"$work/tutorial.cpp") lines) and its service.json"
exit $status
