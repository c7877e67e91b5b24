# Writes the libblas.so.3 alternative's forwarding code from reference_symbols.txt (run at configure time;
# the output is in the build folder): forward.S, one trampoline per function the library does not implement
# (a tail jump through vkgemm_forward_table[i], which alternative.cpp fills from the CPU BLAS at load), and
# forward_names.cpp, the names in the same order. Arguments and return values pass through untouched: the
# trampoline changes no register but the scratch one it jumps through.
# In: SYMBOLS (the list file), IMPLEMENTED (the names the library defines itself), ARCH, OUT_DIR.
file(STRINGS ${SYMBOLS} names REGEX "^[a-z_0-9]+$")
list(REMOVE_ITEM names ${IMPLEMENTED})
list(LENGTH names count)
set(asm "/* Generated from engine/src/blaslib/reference_symbols.txt by forward.cmake. */\n")
string(APPEND asm "  .hidden vkgemm_forward_table\n  .text\n")
set(cpp "// Generated from engine/src/blaslib/reference_symbols.txt by forward.cmake.\n#include <cstddef>\n")
string(APPEND cpp "extern \"C\" {\n__attribute__((visibility(\"hidden\"))) extern const std::size_t vkgemm_forward_count = ${count};\n")
string(APPEND cpp "__attribute__((visibility(\"hidden\"))) void* vkgemm_forward_table[${count}];\n")
string(APPEND cpp "__attribute__((visibility(\"hidden\"))) extern const char* const vkgemm_forward_names[${count}] = {\n")
set(i 0)
foreach(name IN LISTS names)
  math(EXPR offset "${i} * 8")
  string(APPEND asm "  .globl ${name}\n  .type ${name}, @function\n  .p2align 4\n${name}:\n")
  if(ARCH STREQUAL "x86_64")
    string(APPEND asm "  jmp *vkgemm_forward_table+${offset}(%rip)\n")
  else()  # aarch64: x16 is the intra-procedure-call scratch register, free at a call
    string(APPEND asm "  adrp x16, vkgemm_forward_table+${offset}\n")
    string(APPEND asm "  ldr x16, [x16, #:lo12:vkgemm_forward_table+${offset}]\n  br x16\n")
  endif()
  string(APPEND asm "  .size ${name}, .-${name}\n")
  string(APPEND cpp "    \"${name}\",\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND asm "  .section .note.GNU-stack,\"\",@progbits\n")
string(APPEND cpp "};\n}\n")
file(WRITE ${OUT_DIR}/forward.S.new "${asm}")
file(WRITE ${OUT_DIR}/forward_names.cpp.new "${cpp}")
# Rewritten only when they change, so an unchanged list rebuilds nothing.
file(COPY_FILE ${OUT_DIR}/forward.S.new ${OUT_DIR}/forward.S ONLY_IF_DIFFERENT)
file(COPY_FILE ${OUT_DIR}/forward_names.cpp.new ${OUT_DIR}/forward_names.cpp ONLY_IF_DIFFERENT)
