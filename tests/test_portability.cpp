// Portability drivers (MoltenVK on macOS): the loader lists them only to an instance created with
// VK_KHR_portability_enumeration and VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR. vkgemm's own
// instance asks for both wherever the loader offers the extension (Debian 12's loader 1.3.239 does), and
// the validation layer checks the flag against the enabled extensions; a borrowed instance is left as the
// application made it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <volk.h>

#include "vk/instance.hpp"
#include "vkgemm/vkgemm.hpp"

namespace {

// Asked of the loader through the tests' own volk (vkgemm's copy is private to the library).
bool loader_offers(const char* name) {
  REQUIRE(volkInitialize() == VK_SUCCESS);
  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateInstanceExtensionProperties(nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

}  // namespace

TEST_SUITE("portability") {
  TEST_CASE("vkgemm's instance enumerates portability drivers wherever the loader offers it") {
    vkgemm::vk::ValidationSink sink;
    {
      const vkgemm::vk::Instance instance(true, &sink);
      CHECK(instance.portability_enumeration() == loader_offers("VK_KHR_portability_enumeration"));
      // An instance with the flag still lists this machine's devices, and runs a product on one.
      vkgemm::Engine engine({.validation = true});
      std::vector<float> a(6, 1.0f), b(6, 2.0f), c(4, 0.0f);
      engine.gemm(vkgemm::DataType::f32, 2, 2, 3, a.data(), b.data(), c.data());
      CHECK(c == std::vector<float>(4, 6.0f));
      CHECK(engine.validation_message_count() == 0);
    }
    CHECK(sink.count.load() == 0);  // the flag is valid with the extensions enabled beside it
  }
}
