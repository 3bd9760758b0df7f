// Which torch the process runs, from the build options libtorch carries
// (caffe2::GetBuildOptions, the "Build settings" of torch.__config__.show()),
// and whether the plugin was built for it. Parsing is torch-free for tests.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace gpuscope::torch_plugin {

struct TorchBuild {
  bool known = false;          // the running libtorch told us its options
  std::string version;         // TORCH_VERSION, e.g. 2.11.0
  std::string cuda_version;    // CUDA_VERSION, empty for CPU builds
  std::string git_version;     // COMMIT_SHA when the build recorded it
  std::string summary;         // selected options, "KEY=value, ..."
};

TorchBuild torch_build_from_options(const std::map<std::string, std::string>& options);

// Same major.minor.patch; local suffixes (+cu130, a0+git...) are ignored.
bool same_torch_release(std::string_view built_for, std::string_view running);

// The one line said when the versions differ.
std::string version_mismatch_message(std::string_view built_for, std::string_view running);

}  // namespace gpuscope::torch_plugin
