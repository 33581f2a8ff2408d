/*===- specc_runtime.h - the KV-move function, C ABI ------------*- C -*-===//
 *
 * The public entry of specc's runtime: move_accept_tokens_to_target_kvcache
 * (semantics in dialect/KVCache/IR/KVCacheOps.td) on the GPU, through
 * kernels that specc compiled and the CUDA driver API loaded at run time, or
 * on the CPU, through the same kernels compiled for the host. No MLIR, no
 * CUDA headers: callable from C, C++ and Python (ctypes / extensions).
 *
 * A `specc_mover` owns everything a call needs (the device's kernels, the
 * slot lists, the workspace, the status record and the buffer table), so a
 * call allocates nothing, never synchronises unless asked to, and can be
 * captured in a CUDA graph and replayed with new index values. A mover serves
 * one thread at a time; use one mover per stream that runs moves
 * concurrently (they share no scratch).
 *===----------------------------------------------------------------------===*/

#ifndef SPECC_RUNTIME_H
#define SPECC_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPECC_API __attribute__((visibility("default")))

/* Element types of index tensors. */
enum { SPECC_INT32 = 0, SPECC_INT64 = 1 };

/* Where the target slots come from (docs/semantics.md): the request-to-token
 * table, or the head of each request's verify window in out_cache_loc. */
enum { SPECC_TARGETS_REQ_TO_TOKEN = 0, SPECC_TARGETS_WINDOW = 1 };

/* Where a mover runs. */
enum { SPECC_DEVICE_CPU = -1 };

/* Return codes. SPECC_ERROR_INPUT: a checked call found bad input (the status
 * record says which bound; no buffer changed). */
enum {
  SPECC_SUCCESS = 0,
  SPECC_ERROR_INVALID_ARGUMENT = 1,
  SPECC_ERROR_NO_DRIVER = 2,
  SPECC_ERROR_CUDA = 3,
  SPECC_ERROR_INPUT = 4,
  SPECC_ERROR_CAPTURING = 5,
  SPECC_ERROR_OUT_OF_MEMORY = 6,
  /* The kernel image was built for another ABI version, or lacks an entry. */
  SPECC_ERROR_IMAGE = 7,
  /* This call did its work (it was launched), but an earlier call on the
   * same mover, which nobody waited for, found bad input: the message and
   * specc_mover_last_report() say what it was. */
  SPECC_ERROR_EARLIER_INPUT = 8,
};

/* A dense row-major tensor of rank 1 or 2 (shape[1] ignored for rank 1). */
typedef struct specc_tensor {
  void *data;
  int32_t dtype; /* SPECC_INT32 or SPECC_INT64 */
  int32_t rank;
  int64_t shape[2];
} specc_tensor;

/* One KV buffer: `slots` rows of `row_bytes` bytes each, row-major. */
typedef struct specc_kv_buffer {
  void *data;
  int64_t row_bytes;
  int64_t slots;
} specc_kv_buffer;

/* Every index tensor may be int32 or int64, each on its own. With
 * targets = SPECC_TARGETS_WINDOW the first three are ignored and
 * out_cache_loc holds bs windows of D = n / bs slots. */
typedef struct specc_move_args {
  specc_tensor req_pool_indices;   /* [bs] */
  specc_tensor req_to_token;       /* [max_reqs, pool_len] */
  specc_tensor seq_lens;           /* [bs] */
  specc_tensor num_correct_drafts; /* [bs] */
  specc_tensor accept_index;       /* [bs, W], -1 padded */
  specc_tensor out_cache_loc;      /* [n] */
  int32_t targets;                 /* SPECC_TARGETS_* */
} specc_move_args;

/* Fields of the status record: KVCACHE_STATUS_* in
 * dialect/KVCache/KVCacheABI.h (code, entry, value, bound, skipped requests,
 * moved entries, path, reserved). */
#define SPECC_STATUS_FIELDS 8

/* What specc_mover_poll and specc_mover_last_report give: (calls that broke
 * the contract since the previous report, then the latest one's code,
 * entry, value, bound and skipped requests, 0, 0). */
#define SPECC_REPORT_FIELDS 8

typedef struct specc_mover specc_mover;

/* Creates a mover for `device` (a CUDA ordinal, or SPECC_DEVICE_CPU). On a
 * GPU this loads the kernels into the device's primary context: the cubin
 * built for the device when there is one, else the PTX, JIT-compiled by the
 * driver (SPECC_FORCE_PTX=1 forces the PTX path). Scratch is sized for
 * `max_entries` (= bs * W) and grows, outside stream capture, on demand. */
SPECC_API int specc_mover_create(int device, int64_t max_entries,
                                 specc_mover **out);
SPECC_API void specc_mover_destroy(specc_mover *mover);

/* Grows the mover's scratch to hold `max_entries` (nothing when it does
 * already); call it outside stream capture. The mover stays the same one, so
 * CUDA graphs captured on it keep working (scratch they captured is kept
 * until the mover goes). A failure leaves the mover as it was. */
SPECC_API int specc_mover_reserve(specc_mover *mover, int64_t max_entries);

/* Registers the KV buffers the next calls move rows in (uploads the buffer
 * table; synchronous, so not while a stream is capturing). Calls with the same
 * buffers again are free: no allocation, no upload. Buffers that share memory
 * (slots * row_bytes from each data pointer) are refused with
 * SPECC_ERROR_INVALID_ARGUMENT, and the registered ones stay. */
SPECC_API int specc_mover_set_buffers(specc_mover *mover,
                                      const specc_kv_buffer *buffers,
                                      int64_t num_buffers);

/* The KV move on `stream` (a CUstream; 0 for the legacy default stream;
 * ignored on the CPU): one kernel launch. Every bound is checked on the
 * device, per request: a request that breaks one moves none of its rows,
 * every other request moves, and the status record holds the first
 * violation and the number of skipped requests.
 *
 * With `sync` = 0 nothing waits for the device (capturable). A violation is
 * never silent: the kernel also records it in the mover's report (host
 * memory it writes only then), and the next call on the mover that finds
 * it there, after launching its own work, returns
 * SPECC_ERROR_EARLIER_INPUT with the violation in the message; so does
 * specc_mover_poll at any time. Under CUDA-graph replay the report is
 * written the same way. With `sync` = 1 the call waits and returns
 * SPECC_ERROR_INPUT on its own violation (SPECC_ERROR_EARLIER_INPUT on an
 * earlier one). */
SPECC_API int specc_move_accept_tokens(specc_mover *mover,
                                       const specc_move_args *args,
                                       void *stream, int sync);

/* Whether `stream` is capturing a CUDA graph (0 on the CPU): while it is,
 * neither specc_mover_set_buffers with new buffers nor scratch growth may
 * run. Never waits. */
SPECC_API int specc_mover_stream_is_capturing(specc_mover *mover, void *stream,
                                              int *capturing);

/* Reads the status record of the last call (waits for `stream`):
 * SPECC_STATUS_FIELDS values. */
SPECC_API int specc_mover_read_status(specc_mover *mover, void *stream,
                                      int64_t out[SPECC_STATUS_FIELDS]);

/* Never waits: SPECC_ERROR_EARLIER_INPUT (with a message) if calls that
 * finished since the last report broke the contract, else SPECC_SUCCESS.
 * `out` (may be null) receives the report (SPECC_REPORT_FIELDS). Calls
 * still running are seen by a later poll. */
SPECC_API int specc_mover_poll(specc_mover *mover,
                               int64_t out[SPECC_REPORT_FIELDS]);

/* The report behind the last SPECC_ERROR_EARLIER_INPUT or SPECC_ERROR_INPUT
 * of the mover (SPECC_REPORT_FIELDS values). */
SPECC_API int specc_mover_last_report(const specc_mover *mover,
                                      int64_t out[SPECC_REPORT_FIELDS]);

/* Trap mode (debugging): with `trap` != 0, a kernel that finds a violation
 * records it, then stops like a failed device assertion (the CUDA context
 * is lost, as with assert()); on the CPU the process gets SIGILL. Also set
 * at creation by the environment variable SPECC_TRAP=1. */
SPECC_API int specc_mover_set_trap(specc_mover *mover, int trap);

/* Testing: the next `count` scratch allocations of any mover fail as if
 * memory were exhausted (SPECC_ERROR_OUT_OF_MEMORY). */
SPECC_API void specc_testing_fail_allocations(int count);

/* Describes the status record (its first four fields) in words. */
SPECC_API const char *specc_status_message(const int64_t status[4], char *buf,
                                           int64_t len);

/* The message of the last failed call on this thread. */
SPECC_API const char *specc_last_error(void);

/* Which kernel image a GPU mover loaded: "cubin sm_90", "ptx", or "cpu". */
SPECC_API const char *specc_mover_backend(const specc_mover *mover);

#ifdef __cplusplus
}
#endif

#endif /* SPECC_RUNTIME_H */
