// The list of rules. A new rule is a new rules/<id>.cpp plus one line here.
#include "analyzer/rules/rule.h"

namespace gpuscope::analyzer {

extern const Rule kDataloaderStallRule;
extern const Rule kAmpRule;
extern const Rule kPageableMemcpyRule;
extern const Rule kFusionRule;
extern const Rule kLaunchBoundRule;
extern const Rule kHostSyncRule;
extern const Rule kChannelsLastRule;
extern const Rule kMemoryPressureRule;
extern const Rule kAllocatorChurnRule;
extern const Rule kLowUtilizationRule;
extern const Rule kSdpaRule;
extern const Rule kCopyOverlapRule;
extern const Rule kRecompileRule;
extern const Rule kExposedCommunicationRule;
extern const Rule kFusedOptimizerRule;

std::span<const Rule* const> all_rules() {
  static const Rule* const rules[] = {
      &kDataloaderStallRule, &kAmpRule,         &kPageableMemcpyRule, &kFusionRule,
      &kLaunchBoundRule,     &kHostSyncRule,    &kChannelsLastRule,   &kMemoryPressureRule,
      &kAllocatorChurnRule,  &kLowUtilizationRule, &kSdpaRule,        &kCopyOverlapRule,
      &kRecompileRule,       &kExposedCommunicationRule, &kFusedOptimizerRule,
  };
  return rules;
}

}  // namespace gpuscope::analyzer
