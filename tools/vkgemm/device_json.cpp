#include "device_json.hpp"

#include <algorithm>
#include <string>

#include "vkgemm/types.hpp"

namespace vkgemm::cli {
namespace {

using json = nlohmann::ordered_json;  // keys in the order written, as the schemas list them

// The element types of A and B the device has the features for.
json type_names(const DeviceInfo& d) {
  json out = json::array();
  for (const DataType t : all_data_types)
    if (missing_feature(d, t).empty()) out.push_back(std::string(to_string(t)));
  return out;
}

json shapes_json(const std::vector<CooperativeMatrixShape>& shapes) {
  json out = json::array();
  for (const auto& s : shapes) {
    out.push_back({{"m", s.m}, {"n", s.n}, {"k", s.k}, {"a_type", s.a_type}, {"b_type", s.b_type},
                   {"c_type", s.c_type}, {"result_type", s.result_type}, {"scope", s.scope},
                   {"saturating", s.saturating}, {"flexible", s.flexible},
                   {"workgroup_invocations", s.workgroup_invocations}});
  }
  return out;
}

}  // namespace

json device_summary_json(const DeviceInfo& d) {
  return {{"name", d.name},
          {"vendor", d.vendor},
          {"vendor_id", d.vendor_id},
          {"type", std::string(to_string(d.type))},
          {"driver_name", d.driver_name},
          {"driver_info", d.driver_info},
          {"driver_version", d.driver_version},
          {"api_version", d.api_version},
          {"subgroup_size", d.subgroup_size},
          {"max_shared_memory", d.max_shared_memory},
          {"compute_units", d.compute_units},
          {"compute_units_from", d.compute_units_from},
          {"max_workgroup_invocations", d.max_workgroup_invocations},
          {"device_local_memory", d.device_local_memory},
          {"float64", d.float64},
          {"float16", d.float16},
          {"push_descriptor", d.push_descriptor},
          {"host_query_reset", d.host_query_reset},
          {"timestamp_period_ns", d.timestamp_period_ns}};
}

json device_full_json(const DeviceInfo& d) {
  json out = {{"index", d.index}};
  out.update(device_summary_json(d));
  out.update({{"invocations_per_compute_unit", d.invocations_per_compute_unit},
              {"max_workgroup_size", d.max_workgroup_size},
              {"max_workgroup_count", d.max_workgroup_count},
              {"max_storage_buffer_range", d.max_storage_buffer_range},
              {"max_allocation_size", d.max_allocation_size},
              {"storage16", d.storage16},
              {"storage8", d.storage8},
              {"integer_dot", d.integer_dot},
              {"subnormals_on_request",
               {{"f16", d.subnormals_on_request[0]}, {"f32", d.subnormals_on_request[1]},
                {"f64", d.subnormals_on_request[2]}}},
              {"types", type_names(d)},
              {"vulkan_memory_model", d.vulkan_memory_model},
              {"vulkan13", d.vulkan13},
              {"min_subgroup_size", d.min_subgroup_size},
              {"max_subgroup_size", d.max_subgroup_size},
              {"subgroup_size_control", d.subgroup_size_control},
              {"timestamps", d.timestamps},
              {"timestamp_valid_bits", d.timestamp_valid_bits},
              {"pipeline_statistics", d.pipeline_statistics},
              {"max_push_descriptors", d.max_push_descriptors},
              {"has_compute_queue", d.has_compute_queue},
              {"host_copies",
               {{"import", d.host_import},
                {"import_alignment", d.imported_host_alignment},
                {"copy_queues", d.copy_queues}}},
              {"coopmat", {{"khr", d.coopmat_khr}, {"nv", d.coopmat_nv}, {"shapes", shapes_json(d.coopmat_shapes)}}},
              {"coopmat2",
               {{"supported", d.coopmat2},
                {"max_workgroup_invocations", d.coopmat2_max_workgroup_invocations},
                {"shapes", shapes_json(d.coopmat2_shapes)}}},
              {"emulation", {{"supported", d.float64 && d.storage8}, {"int8_matrix_units", int8_matrices(d)}}}});
  return out;
}

bool int8_matrices(const DeviceInfo& d) {
  const auto int8 = [](const std::vector<CooperativeMatrixShape>& shapes) {
    return std::any_of(shapes.begin(), shapes.end(), [](const auto& s) { return s.a_type == "i8"; });
  };
  return d.int8 && ((d.coopmat_khr && int8(d.coopmat_shapes)) || (d.coopmat2 && int8(d.coopmat2_shapes)));
}

}  // namespace vkgemm::cli
