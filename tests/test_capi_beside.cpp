// Products beside writes through the C ABI (vkgemm.h feature 4; engine/src/engine/beside.cpp): a stream of K
// blocks written into two A buffers in turn while the block before is multiplied gives the bits the
// synchronous calls give, with the writes through the host's memcpy (lavapipe's mapped storage) and through
// the staging ring on the upload queue (VKGEMM_TEST_HOST_COPIES=staging); every wrong argument is refused,
// naming it; and a product submitted after a staged write waits for it on the device.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/engine_impl.hpp"
#include "support.hpp"
#include "vkgemm/beside.hpp"
#include "vkgemm/vkgemm.h"

namespace {

// A C engine with validation on, its copies one way where `path` names one (read when the engine is made).
vkgemm_engine* c_engine(const char* path) {
  if (path) setenv("VKGEMM_TEST_HOST_COPIES", path, 1);
  vkgemm_engine_options o{};
  o.struct_size = sizeof o;
  o.validation = 1;
  vkgemm_engine* e = nullptr;
  const vkgemm_status s = vkgemm_engine_create_with(&o, &e);
  unsetenv("VKGEMM_TEST_HOST_COPIES");
  REQUIRE_MESSAGE(s == VKGEMM_OK, vkgemm_last_error());
  return e;
}

vkgemm_buffer* buffer(vkgemm_engine* e, uint64_t bytes) {
  vkgemm_buffer* b = nullptr;
  REQUIRE(vkgemm_buffer_create(e, bytes, &b) == VKGEMM_OK);
  return b;
}

constexpr int64_t kM = 37, kN = 29, kBlock = 11, kBlocks = 4;  // C 37 x 29 += A's 4 K blocks of 11

// Block j's product: C = alpha A_j B_j + (j ? 1 : beta) C, A_j in `a`, B's rows j * kBlock on.
vkgemm_gemm_desc block_desc(int64_t j) {
  vkgemm_gemm_desc d{};
  d.struct_size = sizeof d;
  d.type = VKGEMM_F64, d.c_type = -1, d.column_major = 1;
  d.m = kM, d.n = kN, d.k = kBlock, d.lda = kM, d.ldb = kBlock * kBlocks, d.ldc = kM;
  d.alpha = 0.75, d.beta = j ? 1.0 : -0.5;
  d.batch = 1, d.stride_a = d.stride_b = d.stride_c = -1;
  return d;
}

struct Stream {
  std::vector<double> a, b, c;  // A's blocks back to back (kM x kBlock each), B (K x kN), C
};

Stream random_stream(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Stream s;
  for (auto* v : {&s.a, &s.b, &s.c}) v->resize(v == &s.a ? kM * kBlock * kBlocks : v == &s.b ? kBlock * kBlocks * kN : kM * kN);
  for (auto* v : {&s.a, &s.b, &s.c})
    for (double& x : *v) x = u(rng);
  return s;
}

// C after the stream: each block written then multiplied (`beside` false: vkgemm_buffer_write and
// vkgemm_gemm_buffers), or each block written beside the product of the one before into the other A buffer.
std::vector<double> run_stream(vkgemm_engine* e, const Stream& s, bool beside) {
  const uint64_t block_bytes = kM * kBlock * sizeof(double);
  vkgemm_buffer* a[2] = {buffer(e, block_bytes), buffer(e, block_bytes)};
  vkgemm_buffer* b = buffer(e, s.b.size() * sizeof(double));
  vkgemm_buffer* c = buffer(e, s.c.size() * sizeof(double));
  REQUIRE(vkgemm_buffer_write(e, b, 0, s.b.data(), s.b.size() * sizeof(double)) == VKGEMM_OK);
  REQUIRE(vkgemm_buffer_write(e, c, 0, s.c.data(), s.c.size() * sizeof(double)) == VKGEMM_OK);
  REQUIRE(vkgemm_buffer_write(e, a[0], 0, s.a.data(), block_bytes) == VKGEMM_OK);
  for (int64_t j = 0; j < kBlocks; ++j) {
    const vkgemm_gemm_desc d = block_desc(j);
    const vkgemm_operand oa{sizeof(vkgemm_operand), a[j % 2], 0};
    const vkgemm_operand ob{sizeof(vkgemm_operand), b, uint64_t(j * kBlock) * sizeof(double)};
    const vkgemm_operand oc{sizeof(vkgemm_operand), c, 0};
    const double* next = s.a.data() + (j + 1) * kM * kBlock;
    if (!beside) {
      REQUIRE_MESSAGE(vkgemm_gemm_buffers(e, &d, nullptr, &oa, &ob, &oc, nullptr, nullptr, nullptr) == VKGEMM_OK,
                      vkgemm_last_error());
      if (j + 1 < kBlocks) REQUIRE(vkgemm_buffer_write(e, a[(j + 1) % 2], 0, next, block_bytes) == VKGEMM_OK);
      continue;
    }
    uint64_t ticket = 0;
    REQUIRE_MESSAGE(vkgemm_gemm_buffers_submit(e, &d, nullptr, &oa, &ob, &oc, nullptr, nullptr, &ticket) == VKGEMM_OK,
                    vkgemm_last_error());
    CHECK(ticket != 0);
    // Into the buffer the product before this one read: the write waits for it, then runs beside this one.
    if (j + 1 < kBlocks) REQUIRE(vkgemm_buffer_write_beside(e, a[(j + 1) % 2], 0, next, block_bytes) == VKGEMM_OK);
    int32_t complete = -1;
    REQUIRE(vkgemm_engine_wait(e, ticket, 0, &complete) == VKGEMM_OK);  // a look
    CHECK((complete == 0 || complete == 1));
  }
  int32_t complete = 0;
  if (beside) REQUIRE(vkgemm_engine_wait(e, 0, ~uint64_t{0}, &complete) == VKGEMM_OK);
  CHECK((!beside || complete == 1));
  std::vector<double> out(s.c.size());
  REQUIRE(vkgemm_buffer_read(e, c, 0, out.data(), out.size() * sizeof(double)) == VKGEMM_OK);
  for (vkgemm_buffer* x : {a[0], a[1], b, c}) vkgemm_buffer_destroy(x);
  return out;
}

// `status` is invalid_argument with a sentence naming `needle`.
void refused(vkgemm_status status, const char* needle) {
  CHECK(std::string(vkgemm_status_name(status)) == "invalid_argument");
  CHECK_MESSAGE(std::string(vkgemm_last_error()).find(needle) != std::string::npos, vkgemm_last_error());
}

}  // namespace

TEST_SUITE("c abi beside") {
  TEST_CASE("a stream whose writes run beside its products gives the synchronous calls' bits") {
    std::mt19937_64 rng = vkgemm::test::case_rng(vkgemm::test::current_case_name());
    for (const char* path : {static_cast<const char*>(nullptr), "staging"}) {
      CAPTURE(path ? path : "automatic");
      vkgemm_engine* e = c_engine(path);
      const Stream s = random_stream(rng);
      const std::vector<double> sync = run_stream(e, s, false), beside = run_stream(e, s, true);
      CHECK(std::memcmp(sync.data(), beside.data(), sync.size() * sizeof(double)) == 0);
      // The synchronous result against the host's check: the stream is the product asked for.
      vkgemm_gemm_desc whole = block_desc(0);
      whole.k = kBlock * kBlocks;
      vkgemm_check_result r{};
      r.struct_size = sizeof r;
      REQUIRE(vkgemm_check(&whole, s.a.data(), s.b.data(), s.c.data(), sync.data(), 1, &r) == VKGEMM_OK);
      CHECK_MESSAGE(r.passed == 1, r.summary);
      CHECK(vkgemm_engine_validation_messages(e) == 0);
      vkgemm_engine_destroy(e);
    }
  }

  TEST_CASE("a write beside is what a read after it sees, and a synchronous call after it waits for it") {
    vkgemm_engine* e = c_engine("staging");
    std::vector<double> data(4096), back(4096, 0.0);
    for (size_t i = 0; i < data.size(); ++i) data[i] = double(i) * 0.5;
    vkgemm_buffer* b = buffer(e, data.size() * sizeof(double));
    REQUIRE(vkgemm_buffer_write_beside(e, b, 0, data.data(), data.size() * sizeof(double)) == VKGEMM_OK);
    REQUIRE(vkgemm_buffer_read(e, b, 0, back.data(), back.size() * sizeof(double)) == VKGEMM_OK);
    CHECK(back == data);
    vkgemm_buffer_destroy(b);
    CHECK(vkgemm_engine_validation_messages(e) == 0);
    vkgemm_engine_destroy(e);
  }

  TEST_CASE("wrong arguments are refused, each named") {
    vkgemm_engine* e = c_engine(nullptr);
    vkgemm_engine* other = c_engine(nullptr);
    vkgemm_buffer* a = buffer(e, kM * kBlock * sizeof(double));
    vkgemm_buffer* b = buffer(e, kBlock * kBlocks * kN * sizeof(double));
    vkgemm_buffer* c = buffer(e, kM * kN * sizeof(double));
    vkgemm_buffer* foreign = buffer(other, 64);
    const vkgemm_gemm_desc d = block_desc(0);
    const vkgemm_operand oa{sizeof(vkgemm_operand), a, 0}, ob{sizeof(vkgemm_operand), b, 0}, oc{sizeof(vkgemm_operand), c, 0};
    const vkgemm_operand of{sizeof(vkgemm_operand), foreign, 0};
    uint64_t ticket = 7;
    refused(vkgemm_gemm_buffers_submit(nullptr, &d, nullptr, &oa, &ob, &oc, nullptr, nullptr, &ticket), "engine is null");
    CHECK(ticket == 0);
    refused(vkgemm_gemm_buffers_submit(e, &d, nullptr, &oa, &ob, &oc, nullptr, nullptr, nullptr), "ticket is null");
    refused(vkgemm_gemm_buffers_submit(e, nullptr, nullptr, &oa, &ob, &oc, nullptr, nullptr, &ticket), "vkgemm_gemm_desc");
    refused(vkgemm_gemm_buffers_submit(e, &d, nullptr, &of, &ob, &oc, nullptr, nullptr, &ticket), "a.buffer");
    refused(vkgemm_gemm_buffers_submit(e, &d, nullptr, &oa, nullptr, &oc, nullptr, nullptr, &ticket), "b is null");
    vkgemm_gemm_desc wide = d;
    wide.k = kBlock * kBlocks;  // A's extent past its buffer
    CHECK(vkgemm_gemm_buffers_submit(e, &wide, nullptr, &oa, &ob, &oc, nullptr, nullptr, &ticket) != VKGEMM_OK);
    double x[8] = {};
    refused(vkgemm_buffer_write_beside(nullptr, a, 0, x, sizeof x), "engine is null");
    refused(vkgemm_buffer_write_beside(e, nullptr, 0, x, sizeof x), "buffer is null");
    refused(vkgemm_buffer_write_beside(e, foreign, 0, x, sizeof x), "no live buffer of this engine");
    refused(vkgemm_buffer_write_beside(e, a, kM * kBlock * sizeof(double) - 8, x, sizeof x), "passes the end");
    refused(vkgemm_buffer_write_beside(e, a, ~uint64_t{0} - 4, x, sizeof x), "overflows 64 bits");
    refused(vkgemm_buffer_write_beside(e, a, 0, nullptr, sizeof x), "data is null");
    int32_t complete = 7;
    refused(vkgemm_engine_wait(nullptr, 0, 0, &complete), "engine is null");
    CHECK(complete == 0);
    refused(vkgemm_engine_wait(e, 0, 0, nullptr), "complete is null");
    refused(vkgemm_engine_wait(e, 1u << 30, 0, &complete), "is no submission of this engine");
    // None of the refusals left anything in flight: the everything-wait is complete at once.
    REQUIRE(vkgemm_engine_wait(e, 0, 0, &complete) == VKGEMM_OK);
    CHECK(complete == 1);
    for (vkgemm_buffer* buf : {a, b, c, foreign}) vkgemm_buffer_destroy(buf);
    CHECK(vkgemm_engine_validation_messages(e) == 0);
    CHECK(vkgemm_engine_validation_messages(other) == 0);
    vkgemm_engine_destroy(other);
    vkgemm_engine_destroy(e);
  }

  TEST_CASE("a product submitted after a staged write beside waits for it on the device, not on the host") {
    // Lavapipe has one queue, where the order of submission orders the copy anyway: the wait is seen in the
    // compute queue's count of submissions that waited on another queue's work.
    setenv("VKGEMM_TEST_HOST_COPIES", "staging", 1);
    std::unique_ptr<vkgemm::Engine> e = vkgemm::test::make_engine();
    unsetenv("VKGEMM_TEST_HOST_COPIES");
    vkgemm::detail::EngineImpl& impl = vkgemm::detail::Access::impl(*e);
    if (!impl.submitter->timeline()) {
      vkgemm::test::skip("no timeline semaphores: a write beside is complete on return");
      return;
    }
    vkgemm::GemmDesc d;
    d.type = vkgemm::DataType::f32, d.m = d.n = d.k = 16;
    vkgemm::Buffer a = e->create_buffer(16 * 16 * 4), b = e->create_buffer(16 * 16 * 4), c = e->create_buffer(16 * 16 * 4);
    std::vector<float> ones(256, 1.0f), twos(256, 2.0f), out(256);
    e->write(b, 0, ones.data(), 1024);
    const uint64_t waited = impl.submitter->device_waits();
    vkgemm::write_beside(*e, a, 0, twos.data(), 1024);
    CHECK(impl.submitter->device_waits() == waited);  // taken by the next submission, not before
    const vkgemm::GemmSubmission p = vkgemm::submit_beside(*e, d, {&a, 0}, {&b, 0}, {&c, 0});
    CHECK(impl.submitter->device_waits() == waited + 1);
    CHECK(vkgemm::wait_beside(*e, p.value(), std::chrono::nanoseconds::max()));
    CHECK(vkgemm::wait_beside(*e, 0, std::chrono::nanoseconds::max()));
    e->read(c, 0, out.data(), 1024);
    CHECK(out == std::vector<float>(256, 32.0f));
  }
}
