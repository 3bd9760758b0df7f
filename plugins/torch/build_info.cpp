#include "build_info.h"

#include <cctype>

namespace gpuscope::torch_plugin {
namespace {

// "2.11.0+cu130" -> "2.11.0": the numeric release, up to the first character
// that is neither a digit nor a dot.
std::string_view release_part(std::string_view v) {
  size_t n = 0;
  while (n < v.size() && (std::isdigit(static_cast<unsigned char>(v[n])) || v[n] == '.')) ++n;
  while (n > 0 && v[n - 1] == '.') --n;
  return v.substr(0, n);
}

}  // namespace

TorchBuild torch_build_from_options(const std::map<std::string, std::string>& options) {
  TorchBuild b;
  auto get = [&](const char* key) -> std::string {
    auto it = options.find(key);
    return it == options.end() ? std::string() : it->second;
  };
  b.version = get("TORCH_VERSION");
  b.known = !b.version.empty();
  b.cuda_version = get("CUDA_VERSION");
  b.git_version = get("COMMIT_SHA");
  if (b.git_version.empty()) b.git_version = get("GIT_VERSION");
  for (const char* key : {"BUILD_TYPE", "USE_CUDA", "CUDA_VERSION", "USE_CUDNN", "CUDNN_VERSION", "USE_ROCM",
                          "USE_NCCL", "USE_MKLDNN", "USE_OPENMP", "BLAS_INFO", "CXX_COMPILER"}) {
    std::string v = get(key);
    if (v.empty()) continue;
    if (!b.summary.empty()) b.summary += ", ";
    b.summary += std::string(key) + "=" + v;
  }
  return b;
}

bool same_torch_release(std::string_view built_for, std::string_view running) {
  std::string_view a = release_part(built_for), b = release_part(running);
  return !a.empty() && a == b;
}

std::string version_mismatch_message(std::string_view built_for, std::string_view running) {
  return "the torch plugin was built for torch " + std::string(built_for) + " but this process runs torch " +
         std::string(running) + "; run `gpuscope setup torch` to build one for this torch";
}

}  // namespace gpuscope::torch_plugin
