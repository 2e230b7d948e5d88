/* Readable text form of the IR, one node a line:
 *   %y: float[1,64,32,32] = ConvTranspose(%x: float[1,128,16,16], %w) {strides=[2,2]}  # conv1
 * Types are shown where known; subgraphs are printed indented below the node holding them. */
#ifndef TC_IR_PRINT_H
#define TC_IR_PRINT_H

#include <stdio.h>

#include "ir/ir.h"

tconv_status tc_model_print(const tconv_model *model, FILE *out);

#endif
