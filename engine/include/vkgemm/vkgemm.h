/* vkgemm's C ABI: the engine for every language that is not C++ (the drop-in BLAS library, the Python
 * module through ctypes, ...). A thin layer over the C++ API (vkgemm.hpp): one opaque engine handle, the
 * device list, the full BLAS GEMM on host memory (vkgemm/blas.hpp's GemmDesc), and the same on device buffers
 * that stay on the device between products. libvkgemm_c.so.0 holds the engine and exports these functions alone.
 *
 * Errors: every function that can fail returns a vkgemm_status: VKGEMM_OK (0), or 1 + the C++
 * vkgemm::ErrorCode (the same order; vkgemm_status_name names it). The sentence that explains the failure
 * (the C++ Error's message: the argument, the limit, the device) is kept per thread until the thread's
 * next failing call: vkgemm_last_error(). Nothing throws across the ABI.
 * Threads: an engine may be shared by several threads (its calls run one at a time, as the C++ Engine's).
 * Structures grow only at their end; each starts with its size, which the caller sets (sizeof), so a
 * library newer than the header reads only what the caller has.
 * Versions: VKGEMM_C_ABI_VERSION changes only when something already here changes incompatibly (a
 * structure's field moved, a function's signature changed): a caller refuses a library of another one.
 * VKGEMM_C_ABI_FEATURE counts what was added compatibly (functions, fields at a structure's end): a caller
 * needs a library whose vkgemm_abi_feature() is at least the header's, and a library of an older feature
 * level lacks the newer functions' symbols. Feature 1: device buffers (vkgemm_buffer_*, vkgemm_gemm_buffers).
 * Feature 2: the names of every enumeration (vkgemm_enum_name). Feature 3: the sampled check (vkgemm_check).
 * Feature 4: products beside writes (vkgemm_gemm_buffers_submit, vkgemm_buffer_write_beside,
 * vkgemm_engine_wait): a product left running while host memory is written into other buffers. */
#ifndef VKGEMM_VKGEMM_H
#define VKGEMM_VKGEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VKGEMM_C_ABI_VERSION 2
#define VKGEMM_C_ABI_FEATURE 4
#if defined(VKGEMM_C_BUILDING)
#define VKGEMM_C_API __attribute__((visibility("default")))
#else
#define VKGEMM_C_API
#endif

typedef int32_t vkgemm_status;
enum {
  VKGEMM_OK = 0,
  VKGEMM_STATUS_INTERNAL = 1000, /* a failure that is no vkgemm::Error (std::bad_alloc, ...) */
};

/* Element types, numbered as vkgemm::DataType. */
typedef enum vkgemm_type {
  VKGEMM_F32 = 0,
  VKGEMM_I32 = 1,
  VKGEMM_F64 = 2,
  VKGEMM_F16 = 3,
  VKGEMM_BF16 = 4,
  VKGEMM_I8 = 5,
  VKGEMM_U8 = 6,
} vkgemm_type;

typedef struct vkgemm_engine vkgemm_engine;

typedef struct vkgemm_device_info {
  uint32_t struct_size;       /* sizeof(vkgemm_device_info), set by the caller */
  uint32_t index;             /* as EngineOptions::device and VKGEMM_DEVICE take it */
  char name[256];
  char vendor[64];
  char type[32];              /* "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other" */
  char driver[256];           /* driver name and info */
  char api_version[32];
  uint64_t device_local_memory;
  uint64_t max_allocation_size;
  /* shaderFloat64, shaderFloat16, storageBuffer16BitAccess, storageBuffer8BitAccess, bf16 cooperative
   * matrices, VK_KHR_cooperative_matrix, VK_NV_cooperative_matrix2, timestamps on the compute queue */
  uint32_t float64, float16, storage16, storage8, bfloat16, coopmat, coopmat2, timestamps;
} vkgemm_device_info;

/* One product C_i = alpha op(A_i) op(B_i) + beta C_i, i < batch (vkgemm/blas.hpp, docs/library.md). */
typedef struct vkgemm_gemm_desc {
  uint32_t struct_size;       /* sizeof(vkgemm_gemm_desc) */
  int32_t type;               /* vkgemm_type of A and B (and C, but for f16, bf16, i8, u8) */
  int32_t c_type;             /* -1: the default output type (f32 for f16/bf16, i32 for i8/u8) */
  int32_t column_major;       /* 0: row-major, 1: column-major */
  int32_t trans_a, trans_b;   /* 0: op(X) = X, 1: X^T */
  int64_t m, n, k;
  int64_t lda, ldb, ldc;      /* 0: tight */
  double alpha, beta;
  int64_t batch;              /* 1 for a single product */
  int64_t stride_a, stride_b, stride_c;  /* -1: packed back to back; 0 broadcasts A or B */
} vkgemm_gemm_desc;

/* How it runs; a null pointer means all the defaults. */
typedef struct vkgemm_gemm_options {
  uint32_t struct_size;       /* sizeof(vkgemm_gemm_options) */
  const char* kernel;         /* "auto" (or null), "naive", "tiled", "blocked", "gemv", "thin", "coopmat",
                               * "coopmat2", "ozaki" */
  uint32_t tile;              /* 0: the default (16) */
  uint32_t timestamps;        /* 1: time the product on the GPU (vkgemm_timing.gpu_ms) */
  /* The precision policy: null or "native" (each type's own arithmetic), or "emulated" (f64 and f32: auto may
   * take the ozaki kernel's exact int8 products where the device's cost model predicts a gain; its span
   * guard falls back to the native kernel wherever the emulation would be less accurate: docs/design/ozaki.md).
   * Any other name is refused with VKGEMM status invalid_argument naming the policies there are. */
  const char* precision;
} vkgemm_gemm_options;

typedef struct vkgemm_timing {
  uint32_t struct_size;       /* sizeof(vkgemm_timing) */
  uint32_t gpu_timestamps;    /* 0: no GPU time (not asked for, or the device has no timestamps) */
  double gpu_ms;              /* the product's GPU time, when gpu_timestamps */
  double upload_ms, download_ms, submit_wait_ms;
  char kernel[32];            /* the kernel that ran ("auto" resolved) */
  char config[160];           /* its configuration, e.g. "tile 16" */
} vkgemm_timing;

/* VKGEMM_C_ABI_VERSION of the library (a caller compares it with the header's). */
VKGEMM_C_API int32_t vkgemm_abi_version(void);
/* VKGEMM_C_ABI_FEATURE of the library (feature 1 on; a library before it has no such symbol: feature 0). */
VKGEMM_C_API int32_t vkgemm_abi_feature(void);
/* The library's version, "0.1.0". */
VKGEMM_C_API const char* vkgemm_version(void);

/* Every device the Vulkan loader reports: up to `capacity` written to `out` (each with struct_size set by
 * the caller), their number to *count (which may exceed capacity: call again with room). */
VKGEMM_C_API vkgemm_status vkgemm_devices(vkgemm_device_info* out, size_t capacity, size_t* count);

/* An engine on `device` (an index "1" or a substring of the name; null or "": VKGEMM_DEVICE, else the
 * best device). *out is null after a failure. */
VKGEMM_C_API vkgemm_status vkgemm_engine_create(const char* device, vkgemm_engine** out);

typedef struct vkgemm_engine_options {
  uint32_t struct_size;       /* sizeof(vkgemm_engine_options) */
  const char* device;         /* as vkgemm_engine_create's */
  uint32_t validation;        /* 1: VK_LAYER_KHRONOS_validation on, each message to stderr and counted */
} vkgemm_engine_options;
VKGEMM_C_API vkgemm_status vkgemm_engine_create_with(const vkgemm_engine_options* options, vkgemm_engine** out);
/* The validation messages the engine has had (0 without validation). */
VKGEMM_C_API uint64_t vkgemm_engine_validation_messages(const vkgemm_engine* engine);
VKGEMM_C_API void vkgemm_engine_destroy(vkgemm_engine* engine);
VKGEMM_C_API vkgemm_status vkgemm_engine_device(const vkgemm_engine* engine, vkgemm_device_info* out);
/* Why the engine took its device ("VKGEMM_DEVICE=1", "local rank 1 of 2 (Open MPI: ...) mod the 2 ...",
 * "the best device: ..."; vkgemm::Engine::device_reason), valid while the engine lives; "" for null. */
VKGEMM_C_API const char* vkgemm_engine_device_reason(const vkgemm_engine* engine);

/* The product `desc` describes on host memory laid out as it says (leading dimensions, strides, batch);
 * every argument checked as the reference BLAS checks them before anything runs. timing may be null. */
VKGEMM_C_API vkgemm_status vkgemm_gemm(vkgemm_engine* engine, const vkgemm_gemm_desc* desc, const void* a,
                                       const void* b, void* c, const vkgemm_gemm_options* options,
                                       vkgemm_timing* timing);

/* A fused epilogue and an int8 product's dequantization (vkgemm/blas.hpp's Epilogue; docs/library.md):
 * C = activation(alpha * scale * op(A) op(B) + beta C + bias), the numbers as the C++ enums'. Its scalars are
 * doubles, rounded once to the product's precision (an f64 product's slope and bounds stay doubles). */
typedef struct vkgemm_epilogue {
  uint32_t struct_size;       /* sizeof(vkgemm_epilogue) */
  int32_t bias;               /* 0 none, 1 per_column (n values), 2 per_row (m values) */
  int32_t bias_type;          /* vkgemm_type of the bias: VKGEMM_F32 or C's type */
  int32_t activation;         /* 0 none, 1 relu, 2 leaky_relu, 3 gelu_tanh, 4 gelu_erf, 5 silu, 6 sigmoid,
                               * 7 tanh, 8 clamp */
  double slope;               /* leaky_relu's negative slope */
  int32_t has_lo, has_hi;     /* clamp: 1 where lo (hi) is given; a clamp without both is refused */
  double lo, hi;              /* clamp's bounds, lo <= hi */
  int32_t scale;              /* i8 or u8 into f32 or f16 C (c_type): 0 none, 1 per_tensor, 2 per_column */
  double tensor_scale;        /* per_tensor's scale and the factor of every per_column one; 1 when unused */
} vkgemm_epilogue;

/* vkgemm_gemm with an epilogue (null: none). `vectors` is the epilogue's host memory: the per_column scales
 * (n f32) first, then the bias (its type, at byte 4 n); null when the epilogue reads neither. */
VKGEMM_C_API vkgemm_status vkgemm_gemm_epilogue(vkgemm_engine* engine, const vkgemm_gemm_desc* desc,
                                                const vkgemm_epilogue* epilogue, const void* a, const void* b,
                                                void* c, const void* vectors, const vkgemm_gemm_options* options,
                                                vkgemm_timing* timing);

/* ---- Device buffers (feature 1): operands that stay on the device between products ----
 * A buffer belongs to the engine that made it: every call that takes an engine and a buffer refuses one of
 * another engine, or one already destroyed. Destroying an engine frees the device memory of its buffers still
 * alive; their handles then only await vkgemm_buffer_destroy (every other call refuses them). A buffer must not
 * be destroyed while another thread uses it (as the C++ Buffer). */
typedef struct vkgemm_buffer vkgemm_buffer;

/* A buffer of `bytes` bytes (1 up to the device's maxMemoryAllocationSize) on the engine's device, its
 * contents undefined until written. *out is null after a failure. */
VKGEMM_C_API vkgemm_status vkgemm_buffer_create(vkgemm_engine* engine, uint64_t bytes, vkgemm_buffer** out);
/* Frees the buffer (null: nothing). */
VKGEMM_C_API void vkgemm_buffer_destroy(vkgemm_buffer* buffer);
/* Its size in bytes; 0 for null, and once its engine is destroyed. */
VKGEMM_C_API uint64_t vkgemm_buffer_size(const vkgemm_buffer* buffer);
/* Copies `bytes` bytes from host memory to the buffer at byte `offset` (read: back), waiting until done; the
 * range must lie inside the buffer. Ordered after every earlier product on the engine. */
VKGEMM_C_API vkgemm_status vkgemm_buffer_write(vkgemm_engine* engine, vkgemm_buffer* buffer, uint64_t offset,
                                               const void* data, uint64_t bytes);
VKGEMM_C_API vkgemm_status vkgemm_buffer_read(vkgemm_engine* engine, const vkgemm_buffer* buffer, uint64_t offset,
                                              void* data, uint64_t bytes);

/* Where an operand starts: a buffer of the engine and a byte offset, a multiple of its element size. Its
 * extent follows from the descriptor (leading dimensions, strides, batch) and must fit in the buffer. */
typedef struct vkgemm_operand {
  uint32_t struct_size;       /* sizeof(vkgemm_operand) */
  vkgemm_buffer* buffer;
  uint64_t offset;            /* bytes */
} vkgemm_operand;

/* vkgemm_gemm_epilogue on device buffers: the same descriptor, epilogue (null: none), options and timing,
 * with a, b, c and the epilogue's vectors (the per_column scales, then the bias at byte 4 n, as
 * vkgemm_gemm_epilogue's; null when the epilogue reads neither) in buffers of `engine`. Nothing crosses to
 * the host: submitted and waited for. */
VKGEMM_C_API vkgemm_status vkgemm_gemm_buffers(vkgemm_engine* engine, const vkgemm_gemm_desc* desc,
                                               const vkgemm_epilogue* epilogue, const vkgemm_operand* a,
                                               const vkgemm_operand* b, const vkgemm_operand* c,
                                               const vkgemm_operand* vectors, const vkgemm_gemm_options* options,
                                               vkgemm_timing* timing);

/* ---- The sampled check (feature 3): a product's result judged on the host ----
 * vkgemm::check_sampled (vkgemm/reference.hpp; docs/correctness.md, "The sampled check"): C's whole span
 * `c_out`, what a product `desc` describes made of `c_in` (C's span before it: its values where beta is not 0
 * and in the gaps of ldc and stride_c, which must come back unchanged) from `a` and `b`, judged in
 * O(batch (mk + kn + mn)) work: Freivalds's row sums against random vectors drawn from `seed`, and witnesses
 * in every 64 x 64 tile of C judged element by element, at the native kernel's bound (which the default
 * emulation meets). Inputs of the product's own types, no epilogue. A check that ran returns VKGEMM_OK with
 * its verdict in *result. */
typedef struct vkgemm_check_result {
  uint32_t struct_size;       /* sizeof(vkgemm_check_result) */
  int32_t passed;             /* 1: every witness and row sum within its bound, the gaps unchanged; 0: not */
  double worst_element_ratio; /* the worst witness's error over its allowance (at most 1 passes) */
  double row_sum_ratio;       /* the worst row sum's difference over its bound (at most 1 passes) */
  uint64_t bad_elements;      /* witnesses (and gap elements) off, and the first as an index of C's span */
  uint64_t first_bad;
  uint64_t bad_rows;          /* rows whose sums failed */
  char summary[400];          /* one line for people: the verdict, the errors, the seed, what was judged */
} vkgemm_check_result;
VKGEMM_C_API vkgemm_status vkgemm_check(const vkgemm_gemm_desc* desc, const void* a, const void* b, const void* c_in,
                                        const void* c_out, uint64_t seed, vkgemm_check_result* result);

/* ---- Products beside writes (feature 4): a product runs while the host writes the next operand ----
 * A loop that writes its next operand while the current product runs (K blocks streamed through two buffers)
 * pays about the larger of the write and the product a step, not their sum (vkgemm/beside.hpp).
 * vkgemm_gemm_buffers_submit: vkgemm_gemm_buffers (the same arguments and checks, no timing), returned once
 * submitted; *ticket names the product (0 for an empty one: nothing runs).
 * vkgemm_buffer_write_beside: vkgemm_buffer_write on the device's copy queue, beside the products in flight:
 * it first waits for those that use `buffer`, and returns once `data` was read (the caller may reuse it), its
 * last copies perhaps still running; every product submitted after it waits for them on the device, so it
 * reads what was written.
 * vkgemm_engine_wait: waits up to `timeout_ns` nanoseconds (0: a look, without waiting) for product `ticket`,
 * or for everything in flight (products and writes) where `ticket` is 0; *complete is 1 once it completed,
 * 0 at the timeout. A failure in flight (the device lost) is its status.
 * Every other call that takes the engine or one of its buffers first waits for everything in flight (as
 * vkgemm_engine_wait with ticket 0), so that it keeps its meaning; a product or write beside that failed
 * leaves the buffers it wrote unspecified (a caller that needs them keeps their values elsewhere). */
VKGEMM_C_API vkgemm_status vkgemm_gemm_buffers_submit(vkgemm_engine* engine, const vkgemm_gemm_desc* desc,
                                                      const vkgemm_epilogue* epilogue, const vkgemm_operand* a,
                                                      const vkgemm_operand* b, const vkgemm_operand* c,
                                                      const vkgemm_operand* vectors,
                                                      const vkgemm_gemm_options* options, uint64_t* ticket);
VKGEMM_C_API vkgemm_status vkgemm_buffer_write_beside(vkgemm_engine* engine, vkgemm_buffer* buffer, uint64_t offset,
                                                      const void* data, uint64_t bytes);
VKGEMM_C_API vkgemm_status vkgemm_engine_wait(vkgemm_engine* engine, uint64_t ticket, uint64_t timeout_ns,
                                              int32_t* complete);

/* The last failure's sentence on this thread ("" before any). Valid until this thread's next call. */
VKGEMM_C_API const char* vkgemm_last_error(void);
/* "ok", "invalid_argument", ..., as vkgemm::to_string(ErrorCode); "internal"; "unknown" for other values. */
VKGEMM_C_API const char* vkgemm_status_name(vkgemm_status status);
/* Bytes per element of a type (0 for a value that is no type). */
VKGEMM_C_API size_t vkgemm_type_size(int32_t type);
/* The spelling of number `value` of an enumeration (vkgemm/names.hpp, the one table): "type" (vkgemm_type),
 * "kernel", "activation", "bias_axis", "scale_axis" (vkgemm_epilogue's numbers), "precision", "wait_mode",
 * "error" (a status less 1). Numbers run from 0 up to the first that returns null; null also for a name
 * that is no enumeration (a null `enumeration` lists the enumerations' own names the same way). The strings
 * live as long as the library. Feature 2. */
VKGEMM_C_API const char* vkgemm_enum_name(const char* enumeration, int32_t value);

#ifdef __cplusplus
}
#endif

#endif /* VKGEMM_VKGEMM_H */
