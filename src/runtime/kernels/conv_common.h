/* What the Conv and ConvTranspose kernels share: their operands, every worker's scratch (im2col
 * or col2im block and GEMM packing buffers, in one session scratch piece), and packed weights
 * kept across runs. */
#ifndef TC_RUNTIME_CONV_COMMON_H
#define TC_RUNTIME_CONV_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/compute/compute.h"
#include "runtime/kernels/conv_lattice.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

typedef struct tc_conv_worker_scratch {
    float *col; /* im2col / col2im block */
    tc_gemm_workspace gemm;
} tc_conv_worker_scratch;

/* Every worker's buffers, in one session scratch allocation (tc_kernel_scratch), their
 * descriptions at its start: an array of TC_PARALLEL_MAX_THREADS in the job, which every Conv
 * and ConvTranspose step zeroed with the rest of its job, was 2.7 KB of a 3.8 KB conv_job. */
typedef struct tc_conv_scratch {
    tc_conv_worker_scratch *workers; /* n_workers of them */
    tc_rt_tensor memory;
} tc_conv_scratch;

typedef struct tc_conv_operands {
    const tc_rt_tensor *x, *w, *b;
    int spatial_rank;
} tc_conv_operands;

/* Per worker: col_floats of im2col/col2im scratch and GEMM buffers of kernel `isa` for
 * m x n x k. Release with tc_conv_scratch_release, in reverse order of other scratch. */
tconv_status tc_conv_scratch_reserve(tc_kernel_ctx *ctx, tc_conv_scratch *s, int n_workers,
                                     int64_t col_floats, tc_gemm_isa isa, int64_t m, int64_t n,
                                     int64_t k);
void tc_conv_scratch_release(tc_kernel_ctx *ctx, tc_conv_scratch *s);

/* Memory for `bytes` of packed weights. When W (input 1) is a constant, the node's kept block
 * (kernel.h), packed on the first run only: *fresh tells whether to pack now. Otherwise session
 * scratch, always fresh; the caller releases `scratch` (a no-op when unused). */
tconv_status tc_conv_packed_weights(tc_kernel_ctx *ctx, const tc_kernel_cache_key *key,
                                    size_t bytes, float **out, bool *fresh, tc_rt_tensor *scratch);

/* A table that depends on the geometry of lats[0..n) alone (n at most TC_CONV_TABLE_LATTICES)
 * and on `kind` (which table it is: TC_CONV_TABLE_*), of nbytes: a session keeps it with the
 * node (tc_kernel_shape_table), so that it is made again only when a shape changes (*fresh: the
 * caller fills it now); outside a session, and above TC_CONV_TABLE_KEEP_MAX_BYTES, it is
 * `scratch`, which the caller releases (a no-op when unused), always fresh. */
#define TC_CONV_TABLE_LATTICES 16
/* Kept only up to this size: a 3x3 Conv's masks take 18 bytes an output position, half an
 * 8-channel activation's, and every node would hold them between runs. Up to 64 KiB (some 3600
 * positions) making them is a few us, and can be most of the serial part of a node of
 * microseconds (U-Net's 64x96 3x3: 3.7 us); a node with more positions spends far more on its
 * GEMM than on them. */
#define TC_CONV_TABLE_KEEP_MAX_BYTES (64 * 1024)
enum {
    TC_CONV_TABLE_TAP_MASKS,   /* tc_conv_tap_masks_for, X read as it lies */
    TC_CONV_TABLE_PHASE_MASKS, /* the same over phase planes */
    TC_CONV_TABLE_NARROW       /* the narrow Conv's tap offsets (kernels_conv.c) */
};
tconv_status tc_conv_lattice_table(tc_kernel_ctx *ctx, int64_t kind, const tc_lattice *const *lats,
                                   int n, size_t nbytes, void **data, bool *fresh,
                                   tc_rt_tensor *scratch);

/* The masked flat read's tables of one lattice (conv_lattice.h: tc_lattice_masked_taps). */
typedef struct tc_conv_tap_masks {
    int64_t *shifts;
    uint16_t *masks;
    uint8_t *full;
} tc_conv_tap_masks;

/* The tap tables of lats[0..n) (phase_planes: as tc_lattice_masked_taps takes it) into
 * out[0..n), through tc_conv_lattice_table. */
tconv_status tc_conv_tap_masks_for(tc_kernel_ctx *ctx, const tc_lattice *const *lats, int n,
                                   bool phase_planes, tc_conv_tap_masks *out,
                                   tc_rt_tensor *scratch);

/* Tasks a thread the split aims at (dynamic scheduling evens them out), and the narrowest
 * column block it makes for them. */
#define TC_CONV_TASKS_PER_THREAD 4
#define TC_CONV_MIN_PARALLEL_COLS 64

/* One way to split the GEMMs of `outer` (batch, group) units over the threads. */
typedef struct tc_conv_split {
    tc_gemm_isa isa;
    int64_t block_cols, n_blocks, chunks;
    int64_t area; /* the busiest thread's cost: columns x (rows + B's stream), padded */
} tc_conv_split;

/* The work tc_parallel_threads_for_work weighs for `units` GEMMs of `rows` x `depth` x
 * `columns`: the rows the tiles compute (to 8, the least row tile) and each tile's store and
 * epilogue as 8 more steps of depth. A small GEMM runs well below the peak the cost model
 * assumes: ERFNet's 3 -> 13 channel stride-2 stem (depth 27) took 13 us for its 0.72 MFLOP
 * (7 us at the peak, under the split's floor), its 16 -> 5 channel k2 s2 ConvTranspose 17 us;
 * counted this way both run on 2 threads (erfnet, stylegan2_generator, unet: 1-1.5% faster at
 * 2 threads, the rest level). */
double tc_conv_gemm_work(int64_t units, int64_t rows, int64_t depth, int64_t columns);

/* More than one thread, a GEMM of `rows` output channels by `columns` positions a unit: column
 * blocks in whole steps of the tile's last panel, so that a thread's share is not padded tiles.
 * With B read in place by row pointers (`b_rows`: the masked and wide Conv paths, the phase
 * form) a partial panel computes only its 16-column vectors, so blocks step by 16 and a 32-row
 * GEMM of 256 columns takes two blocks of 128 in 8x48 tiles (erfnet's 16-channel 3x3 s2 Conv,
 * 2 threads: 15.5 -> 11.8 us; whole 48-column tiles chose 12x32 tiles, 36 rows for 32); a
 * packed B computes whole tiles, so blocks step by the tile's width (blocks rounded to
 * TC_COL_BLOCK_GRANULE, the one-thread rule, once made erfnet's 256 columns two blocks of 96
 * and one of 64, and the thread that took the wide ones worked 2 us longer than the other).
 * Tried: each tile shape, from the block count that keeps blocks within `cap` columns up to
 * TC_CONV_TASKS_PER_THREAD blocks a thread of at least TC_CONV_MIN_PARALLEL_COLS, the output
 * channels split too when the blocks leave threads idle; the busiest thread's least cost wins
 * (its columns times its rows and its B's stream: conv_common.c), ties going to fewer row
 * chunks, then to fewer tasks. Conv, and ConvTranspose's phase form. */
tc_conv_split tc_conv_parallel_split(int64_t rows, int64_t columns, int64_t outer, int64_t cap,
                                     bool b_rows, int threads);

/* The prepare of Conv and ConvTranspose: `run` with a tc_rank_attrs of `size`-byte reads (in
 * pc->arena) as its parameters, and `work`. Fails only for memory. */
tconv_status tc_conv_prepare(const tc_kernel_prepare_ctx *pc, tc_rank_attr_reader read, size_t size,
                             tc_kernel_fn run, tc_kernel_work_fn work, tc_kernel_prepared *out);
/* Reads X, W and the optional B (float, ranks 3 to TC_MAX_SPATIAL + 2, W's rank X's). */
tconv_status tc_conv_read_operands(tc_kernel_ctx *ctx, tc_conv_operands *ops);
/* B, when given, must be 1-D with c_out elements. */
tconv_status tc_conv_check_bias(tc_kernel_ctx *ctx, const tc_rt_tensor *b, int64_t c_out);

#endif
