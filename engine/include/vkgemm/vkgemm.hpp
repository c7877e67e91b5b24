// vkgemm: a portable Vulkan GEMM engine. Include this header for the whole public API.
#pragma once

#include "vkgemm/device_info.hpp"
#include "vkgemm/engine.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/half.hpp"
#include "vkgemm/options.hpp"
#include "vkgemm/peak.hpp"
#include "vkgemm/reference.hpp"
#include "vkgemm/statistics.hpp"
#include "vkgemm/tuning.hpp"
#include "vkgemm/types.hpp"
#include "vkgemm/version.hpp"
