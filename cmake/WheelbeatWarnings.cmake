# Warnings for the project's own targets (not imposed on consumers of the installed package).
function(wheelbeat_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror -Wshadow
                         -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wunused
                         -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough)
endfunction()
