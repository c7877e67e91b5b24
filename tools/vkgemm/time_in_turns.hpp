// Timing several contenders fairly on a GPU whose clock drifts: `vkgemm tune`'s last word between its
// finalists and the configuration auto runs today.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace vkgemm::cli {

// Times each of `contenders` `rounds` times, in turns: every round times each contender once, in order in
// the even rounds and in reverse order in the odd ones, and each contender's median over the rounds is
// returned. With an even number of rounds a clock that drifts linearly over the whole series shifts every
// contender's median alike (a contender timed early in one round is timed late in the next), and the median
// drops one outlier (a GPU still ramping its clock in the first round). time_one(i) times contender i once,
// in milliseconds. rounds >= 1; contenders may be 0 (an empty result).
std::vector<double> time_in_turns(size_t contenders, int rounds, const std::function<double(size_t)>& time_one);

}  // namespace vkgemm::cli
