/* A C program against the installed C ABI (vkgemm/vkgemm.h, -lvkgemm_c), built by tests/package/run.sh as
 * C99 with warnings as errors: the header is C, and the library answers. A 2x3 by 3x2 product with alpha,
 * beta and B transposed, checked exactly (small integers), then a refusal with its status name and sentence;
 * the same product on device buffers (vkgemm_gemm_buffers), and a buffer of another engine refused. */
#include <stdio.h>
#include <string.h>

#include <vkgemm/vkgemm.h>

/* The product of main's d on device buffers: A and B^T written, C = 1 everywhere, C read back; then a
 * buffer of a second engine refused, naming the operand. */
static int buffers(vkgemm_engine* engine, const vkgemm_gemm_desc* d, const float* a, const float* bt) {
  const float ones[4] = {1, 1, 1, 1}, want[4] = {24, 20, 42, 32};
  float c[4] = {0, 0, 0, 0};
  vkgemm_buffer *ba = NULL, *bb = NULL, *bc = NULL, *foreign = NULL;
  vkgemm_engine* second = NULL;
  int failed = vkgemm_buffer_create(engine, 6 * sizeof(float), &ba) ||
               vkgemm_buffer_create(engine, 6 * sizeof(float), &bb) ||
               vkgemm_buffer_create(engine, 4 * sizeof(float), &bc) ||
               vkgemm_buffer_write(engine, ba, 0, a, 6 * sizeof(float)) ||
               vkgemm_buffer_write(engine, bb, 0, bt, 6 * sizeof(float)) ||
               vkgemm_buffer_write(engine, bc, 0, ones, sizeof ones);
  vkgemm_operand oa = {sizeof(vkgemm_operand), ba, 0}, ob = {sizeof(vkgemm_operand), bb, 0},
                 oc = {sizeof(vkgemm_operand), bc, 0};
  failed = failed || vkgemm_gemm_buffers(engine, d, NULL, &oa, &ob, &oc, NULL, NULL, NULL) ||
           vkgemm_buffer_read(engine, bc, 0, c, sizeof c) || memcmp(c, want, sizeof want) != 0;
  if (failed) {
    fprintf(stderr, "c consumer: buffers: %s: %g %g %g %g\n", vkgemm_last_error(), c[0], c[1], c[2], c[3]);
  } else if (vkgemm_engine_create(NULL, &second) != VKGEMM_OK ||
             vkgemm_buffer_create(second, 64, &foreign) != VKGEMM_OK) {
    fprintf(stderr, "c consumer: a second engine: %s\n", vkgemm_last_error());
    failed = 1;
  } else {
    oc.buffer = foreign;
    vkgemm_status status = vkgemm_gemm_buffers(engine, d, NULL, &oa, &ob, &oc, NULL, NULL, NULL);
    if (strcmp(vkgemm_status_name(status), "invalid_argument") != 0 || !strstr(vkgemm_last_error(), "c.buffer")) {
      fprintf(stderr, "c consumer: another engine's buffer gave %s: %s\n", vkgemm_status_name(status),
              vkgemm_last_error());
      failed = 1;
    } else {
      printf("c consumer: buffers passed (then \"%s\")\n", vkgemm_last_error());
    }
  }
  vkgemm_buffer_destroy(ba), vkgemm_buffer_destroy(bb), vkgemm_buffer_destroy(bc), vkgemm_buffer_destroy(foreign);
  vkgemm_engine_destroy(second);
  return failed;
}

/* The sampled check (feature 3): the right C passes, one element moved fails, a missing result is refused. */
static int check(const vkgemm_gemm_desc* d, const float* a, const float* bt, const float* c) {
  const float c_in[4] = {1, 1, 1, 1};
  float moved[4];
  memcpy(moved, c, sizeof moved);
  moved[3] += 0.5f;
  vkgemm_check_result right, wrong;
  memset(&right, 0, sizeof right), memset(&wrong, 0, sizeof wrong);
  right.struct_size = wrong.struct_size = sizeof right;
  const vkgemm_status s1 = vkgemm_check(d, a, bt, c_in, c, 7, &right);
  const vkgemm_status s2 = vkgemm_check(d, a, bt, c_in, moved, 7, &wrong);
  const vkgemm_status s3 = vkgemm_check(d, a, bt, c_in, c, 7, NULL);
  if (s1 != VKGEMM_OK || !right.passed || s2 != VKGEMM_OK || wrong.passed || wrong.bad_elements == 0 ||
      strcmp(vkgemm_status_name(s3), "invalid_argument") != 0) {
    fprintf(stderr, "c consumer: check: %s %d (%s); moved: %s %d (%s); no result: %s\n", vkgemm_status_name(s1),
            right.passed, right.summary, vkgemm_status_name(s2), wrong.passed, wrong.summary, vkgemm_status_name(s3));
    return 1;
  }
  printf("c consumer: check passed (%s)\n", wrong.summary);
  return 0;
}

int main(void) {
  if (vkgemm_abi_version() != VKGEMM_C_ABI_VERSION) return 1;
  vkgemm_engine* engine = NULL;
  vkgemm_status status = vkgemm_engine_create(NULL, &engine);
  if (status != VKGEMM_OK) {
    fprintf(stderr, "c consumer: %s: %s\n", vkgemm_status_name(status), vkgemm_last_error());
    return 1;
  }
  const float a[6] = {1, 2, 3, 4, 5, 6};     /* 2x3, row-major */
  const float bt[6] = {1, 0, 2, 0, 1, 1};    /* B^T: 2x3, row-major, so B is 3x2 */
  float c[4] = {1, 1, 1, 1};
  vkgemm_gemm_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.type = VKGEMM_F32;
  d.c_type = -1;
  d.trans_b = 1;
  d.m = 2, d.n = 2, d.k = 3;
  d.alpha = 2, d.beta = 10;
  d.batch = 1;
  d.stride_a = d.stride_b = d.stride_c = -1;
  vkgemm_timing t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  status = vkgemm_gemm(engine, &d, a, bt, c, NULL, &t);
  /* A B = [[7, 5], [16, 11]]; 2 A B + 10 = [[24, 20], [42, 32]] */
  const float want[4] = {24, 20, 42, 32};
  if (status != VKGEMM_OK || memcmp(c, want, sizeof want) != 0) {
    fprintf(stderr, "c consumer: %s %s: %g %g %g %g\n", vkgemm_status_name(status), vkgemm_last_error(), c[0], c[1],
            c[2], c[3]);
    return 1;
  }
  const float c_out[4] = {24, 20, 42, 32};
  if (check(&d, a, bt, c_out) != 0) return 1;
  d.lda = 2; /* smaller than the 3 columns of the row-major A */
  status = vkgemm_gemm(engine, &d, a, bt, c, NULL, NULL);
  if (strcmp(vkgemm_status_name(status), "invalid_leading_dimension") != 0 || !strstr(vkgemm_last_error(), "lda")) {
    fprintf(stderr, "c consumer: lda = 2 gave %s: %s\n", vkgemm_status_name(status), vkgemm_last_error());
    return 1;
  }
  printf("c consumer: passed (%s, then \"%s\")\n", t.kernel, vkgemm_last_error());
  d.lda = 0;
  if (buffers(engine, &d, a, bt) != 0) return 1;
  vkgemm_engine_destroy(engine);
  return 0;
}
