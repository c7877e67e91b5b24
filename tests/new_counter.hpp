// Counts the process's operator new calls while counting is on: the engine's own allocations in a span of
// code (tests/test_plan.cpp, around Plan::record). Its own file, so that no caller inlines the replaced
// operators. Off (available() false) in sanitizer builds, whose runtimes own operator new.
#pragma once

#include <cstdint>

namespace vkgemm::test {
bool new_counter_available() noexcept;
void count_news(bool on) noexcept;
uint64_t news_counted() noexcept;
}  // namespace vkgemm::test
