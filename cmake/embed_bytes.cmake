# cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed_bytes.cmake: a C array of the file's bytes
# (the ONNX function library the runtime expands ops without a kernel with; see
# scripts/generate_onnx_functions.py).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE "${OUT}" "/* Generated from ${IN} by cmake/embed_bytes.cmake: do not edit. */\n#include <stddef.h>\nconst unsigned char ${NAME}[] = {\n${body}0};\nconst size_t ${NAME}_size = ${bytes};\n")
