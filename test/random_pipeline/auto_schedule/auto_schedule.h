// Random pipeline testing, part 7, the scheduler's side: auto mode's implementation (auto.h),
// in its own library (slinky_random_pipeline_auto) because it calls slinky::schedule(), a layer
// above the builder whose tests link slinky_random_pipeline.
#ifndef SLINKY_TOOLS_RANDOM_PIPELINE_AUTO_SCHEDULE_H
#define SLINKY_TOOLS_RANDOM_PIPELINE_AUTO_SCHEDULE_H

namespace slinky {
namespace random_test {

// Makes auto mode available to the tester (set_auto_scheduler, auto.h). Call it once before
// generating cases with features that include auto mode.
void enable_auto_mode();

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_AUTO_SCHEDULE_H
