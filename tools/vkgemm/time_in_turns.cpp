#include "time_in_turns.hpp"

#include <algorithm>

namespace vkgemm::cli {

std::vector<double> time_in_turns(size_t contenders, int rounds, const std::function<double(size_t)>& time_one) {
  std::vector<std::vector<double>> times(contenders);
  for (int round = 0; round < rounds; ++round) {
    for (size_t turn = 0; turn < contenders; ++turn) {
      const size_t i = round % 2 == 0 ? turn : contenders - 1 - turn;
      times[i].push_back(time_one(i));
    }
  }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    const size_t h = t.size() / 2;
    medians.push_back(t.size() % 2 ? t[h] : 0.5 * (t[h - 1] + t[h]));
  }
  return medians;
}

}  // namespace vkgemm::cli
