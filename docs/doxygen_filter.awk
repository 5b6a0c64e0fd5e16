# Doxygen's INPUT_FILTER for the public headers (docs/Doxyfile): the headers write their contracts
# as plain // comments, which Doxygen does not read, so this turns them into Doxygen comments on
# the fly, line for line (warnings keep their line numbers; the headers stay as they are):
#   - the file's leading comment block becomes the file's documentation (\file on its last line);
#   - a comment line of its own becomes ///, documenting the declaration that follows;
#   - a comment after code ("int x;  // ...") becomes ///<, documenting that code, and so do the
#     comment lines right below it that start in the same column (its continuation);
#   - NOLINT comments and the comments closing a namespace are left alone.
function flushHeader(   i) {
  for (i = 1; i <= nheader; ++i) print header[i] (i == nheader ? " \\file" : "")
  nheader = 0
}
BEGIN { inHeader = 1; nheader = 0; trailCol = 0 }
{
  line = $0
  if (line ~ /NOLINT/) { if (inHeader) { flushHeader(); inHeader = 0 } print line; trailCol = 0; next }
  if (line ~ /^[ \t]*\/\/([^\/!]|$)/) {  # a comment line of its own
    col = index(line, "//")
    if (trailCol && col == trailCol) { sub(/\/\//, "///<", line); print line; next }
    trailCol = 0
    sub(/\/\//, "///", line)
    if (inHeader) { header[++nheader] = line; next }
    print line; next
  }
  if (inHeader) { flushHeader(); inHeader = 0 }
  trailCol = 0
  if (match(line, /  \/\/( |$)/) && line !~ /^[ \t]*\/\// && line !~ /^}  \/\/ namespace/) {  # a comment after code
    trailCol = RSTART + 2
    line = substr(line, 1, RSTART + 3) "/<" substr(line, RSTART + 4)
  }
  print line
}
END { if (inHeader) flushHeader() }
