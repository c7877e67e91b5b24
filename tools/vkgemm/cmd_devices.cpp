// vkgemm devices: every Vulkan device with what vkgemm cares about, as text or (--json) as one JSON
// document that follows docs/devices.schema.json.
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "build_commit.hpp"
#include "commands.hpp"
#include "device_json.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {
namespace {

std::string bytes_human(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(b) / double(1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(b) / double(1ull << 20));
  if (b >= (1ull << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(b) / double(1ull << 10));
  return fmt::format("{} B", b);
}

std::string shape_text(const CooperativeMatrixShape& s) {
  std::string out = fmt::format("{}x{}x{} {}*{}+{}->{} {}", s.m, s.n, s.k, s.a_type, s.b_type, s.c_type,
                                s.result_type, s.scope);
  if (s.workgroup_invocations) out += fmt::format(" ({} invocations)", s.workgroup_invocations);
  if (s.saturating) out += " saturating";
  return out;
}

void print_shapes(const std::vector<CooperativeMatrixShape>& shapes) {
  for (const auto& s : shapes) fmt::print("                      {}\n", shape_text(s));
}

void print_emulation(const DeviceInfo& d) {
  if (!d.float64 || !d.storage8) {
    fmt::print("    emulated f64/f32  no: the ozaki kernel needs shaderFloat64 and storageBuffer8BitAccess\n");
  } else {
    fmt::print("    emulated f64/f32  yes (--kernel ozaki){}\n",
               int8_matrices(d) ? ", int8 products on matrix units: auto takes it with --precision emulated"
                                : ", int8 products by tiled: auto keeps the native kernels");
  }
}

void print_coopmat(const DeviceInfo& d) {
  fmt::print("    16-bit            storage {}, memory model {}, subgroup sizes {} to {} (size control {})\n",
             d.storage16 ? "yes" : "no", d.vulkan_memory_model ? "yes" : "no", d.min_subgroup_size,
             d.max_subgroup_size, d.subgroup_size_control ? "yes" : "no");
  if (!d.coopmat_khr) {
    fmt::print("    coopmat           no VK_KHR_cooperative_matrix{}\n",
               d.coopmat_nv ? " (VK_NV_cooperative_matrix only, which vkgemm does not use)" : "");
  } else {
    fmt::print("    coopmat           VK_KHR_cooperative_matrix, {} shapes (M x N x K, A*B+C->result, scope):\n",
               d.coopmat_shapes.size());
    print_shapes(d.coopmat_shapes);
  }
  fmt::print("    int8 dot          {}\n",
             d.integer_dot ? "yes (shaderIntegerDotProduct): tiled sums i8 and u8 four at a time"
                           : "no shaderIntegerDotProduct (Vulkan 1.3): tiled sums i8 and u8 one at a time");
  // bf16 shapes are listed with the others; the matrix kernels need this feature to run them.
  fmt::print("    bf16 matrices     {}\n", d.bfloat16_coopmat ? "yes (VK_KHR_shader_bfloat16, shaderBFloat16CooperativeMatrix)"
                                                            : "no shaderBFloat16CooperativeMatrix (VK_KHR_shader_bfloat16)");
  if (!d.coopmat2) {
    fmt::print("    coopmat2          no VK_NV_cooperative_matrix2 (with workgroup scope, flexible dimensions, "
               "tensor addressing)\n");
  } else {
    fmt::print("    coopmat2          VK_NV_cooperative_matrix2, workgroups up to {} invocations, flexible shapes "
               "(granularity M x N x K):\n", d.coopmat2_max_workgroup_invocations);
    print_shapes(d.coopmat2_shapes);
  }
  print_emulation(d);
}

// The document docs/devices.schema.json describes: which vkgemm looked, and every device it found (an
// empty list is a valid document; the exit code says there was nothing).
int print_devices_json(const std::vector<DeviceInfo>& devices) {
  nlohmann::ordered_json doc = {{"format", "vkgemm-devices"},
                                {"format_version", 1},
                                {"vkgemm", {{"version", version}, {"commit", build_commit}}},
                                {"devices", nlohmann::ordered_json::array()}};
  for (const auto& d : devices) doc["devices"].push_back(device_full_json(d));
  fmt::print("{}\n", doc.dump(2));
  return devices.empty() ? 1 : 0;
}

// Which device an engine of this process takes, and why (VKGEMM_DEVICE, the launcher's local rank of an MPI
// rank, or the best device): under mpirun, each rank says which GPU it gets. Exit 1 when it would take none.
int print_choice(const std::vector<DeviceInfo>& devices) {
  try {
    const DeviceChoice choice = Engine::choose_device();
    fmt::print("this process takes [{}] {}: {}\n", choice.index, devices.at(choice.index).name, choice.reason);
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "vkgemm: this process takes no device: {}\n", e.what());
    return 1;
  }
}

int list_devices(bool json) {
  const auto devices = Engine::devices();
  if (json) return print_devices_json(devices);
  if (devices.empty()) {
    fmt::print(stderr, "vkgemm: no Vulkan device found (apt-get install mesa-vulkan-drivers gives lavapipe)\n");
    return 1;
  }
  for (const auto& d : devices) {
    fmt::print("[{}] {}\n", d.index, d.name);
    fmt::print("    vendor            {} (0x{:04x}), {}\n", d.vendor, d.vendor_id, to_string(d.type));
    fmt::print("    driver            {} {} ({}), Vulkan {}\n", d.driver_name, d.driver_version, d.driver_info,
               d.api_version);
    fmt::print("    subgroup size     {}\n", d.subgroup_size);
    fmt::print("    shared memory     {} bytes per workgroup\n", d.max_shared_memory);
    if (d.compute_units) {
      fmt::print("    compute units     {}, {} invocations each ({})\n", d.compute_units, d.invocations_per_compute_unit,
                 d.compute_units_from);
    } else {
      fmt::print("    compute units     not reported (the planner estimates)\n");
    }
    fmt::print("    workgroup         {} invocations, size {}x{}x{}, count {}x{}x{}\n", d.max_workgroup_invocations,
               d.max_workgroup_size[0], d.max_workgroup_size[1], d.max_workgroup_size[2], d.max_workgroup_count[0],
               d.max_workgroup_count[1], d.max_workgroup_count[2]);
    fmt::print("    storage buffer    {} per binding, allocations up to {}, device memory {}\n",
               bytes_human(d.max_storage_buffer_range), bytes_human(d.max_allocation_size),
               bytes_human(d.device_local_memory));
    fmt::print("    fp64 / fp16       {} / {}\n", d.float64 ? "yes" : "no", d.float16 ? "yes" : "no");
    const auto kept = [&](size_t width) { return d.subnormals_on_request[width] ? "yes" : "no"; };
    fmt::print("    subnormals        kept on request: f16 {}, f32 {}, f64 {} (vkgemm's shaders do not ask: a device "
               "may flush them)\n", kept(0), kept(1), kept(2));
    std::string types;
    for (const DataType t : all_data_types) {
      const std::string_view missing = missing_feature(d, t);
      types += fmt::format("{}{}{}", types.empty() ? "" : ", ", to_string(t),
                           missing.empty() ? "" : fmt::format(" (no: {})", missing));
    }
    fmt::print("    types (A, B)      {}\n", types);
    if (d.timestamps) {
      fmt::print("    timestamps        yes ({} valid bits, {} ns per tick; reset {})\n", d.timestamp_valid_bits,
                 d.timestamp_period_ns, d.host_query_reset ? "on the host" : "by a command");
    } else {
      fmt::print("    timestamps        no (GPU times cannot be measured; host times only)\n");
    }
    print_coopmat(d);
    fmt::print("    pipeline stats    {}\n", d.pipeline_statistics ? "yes (VK_KHR_pipeline_executable_properties)"
                                                                : "no (no VK_KHR_pipeline_executable_properties)");
    if (d.push_descriptor) {
      fmt::print("    push descriptors  yes (VK_KHR_push_descriptor, {} per set): plans record with no descriptor set\n",
                 d.max_push_descriptors);
    } else {
      // The kernels bind 3 storage buffers; a device with the extension and enough of them had it turned off.
      const std::string why = d.max_push_descriptors == 0 ? std::string("no VK_KHR_push_descriptor")
                              : d.max_push_descriptors < 3
                                  ? fmt::format("maxPushDescriptors {} < 3", d.max_push_descriptors)
                                  : std::string("VKGEMM_TEST_NO_PUSH_DESCRIPTOR=1");
      fmt::print("    push descriptors  no ({}): plans record from a ring of descriptor sets\n", why);
    }
    fmt::print("    host copies       {}; {}\n",
               d.host_import ? fmt::format("the caller's pages imported (VK_EXT_external_memory_host, alignment {})",
                                           d.imported_host_alignment)
                             : std::string("staged (no VK_EXT_external_memory_host)"),
               d.copy_queues ? fmt::format("{} copy queue{} (a transfer-only family) beside the compute queue",
                                           d.copy_queues, d.copy_queues == 1 ? "" : "s")
                             : std::string("no copy queue: copies on the compute queue"));
    if (!d.has_compute_queue) fmt::print("    compute queue     none: vkgemm cannot use this device\n");
  }
  return print_choice(devices);
}

}  // namespace

Command add_devices_command(CLI::App& cmd, CommonOptions& /*common*/) {
  auto json = std::make_shared<bool>(false);
  cmd.add_flag("--json", *json, "Print the devices as one JSON document (docs/devices.schema.json)");
  return {.run = [json] { return list_devices(*json); }};
}

}  // namespace vkgemm::cli
