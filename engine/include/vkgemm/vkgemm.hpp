// vkgemm: a portable Vulkan GEMM engine. Include this header for the whole public API but the adoption of an
// application's device (vkgemm/vulkan.hpp). Plans (plan.hpp) name Vulkan handles, so this header includes
// <vulkan/vulkan_core.h> (types only, no prototypes): a consumer needs the Vulkan headers, not the loader.
#pragma once

#include "vkgemm/blas.hpp"
#include "vkgemm/chain.hpp"
#include "vkgemm/device_info.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/half.hpp"
#include "vkgemm/options.hpp"
#include "vkgemm/peak.hpp"
#include "vkgemm/plan.hpp"
#include "vkgemm/reference.hpp"
#include "vkgemm/statistics.hpp"
#include "vkgemm/tuning.hpp"
#include "vkgemm/types.hpp"
#include "vkgemm/version.hpp"
