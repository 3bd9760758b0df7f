// Seeded noise for the diff tests, identical on every platform (the standard
// library's distributions are not): splitmix64 and Box-Muller.
#pragma once

#include <cmath>
#include <cstdint>

namespace gpuscope::testing {

class Noise {
 public:
  explicit Noise(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; }  // (0, 1)
  double normal() {
    const double u = uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  // A lognormal factor with mean 1 and coefficient of variation `cv`.
  double factor(double cv) {
    if (cv <= 0) return 1.0;
    const double s = std::sqrt(std::log1p(cv * cv));
    return std::exp(s * normal() - s * s / 2);
  }

 private:
  uint64_t state_;
};

}  // namespace gpuscope::testing
