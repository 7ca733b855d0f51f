// How a run is ended, as data (STYLE.md rule 5): the signals sent to the whole tree, in order,
// and how long to wait after each before the next. The last step is always SIGKILL. Tests shorten
// the grace; callers can read it.
#pragma once

#include <signal.h>

#include <chrono>
#include <vector>

namespace cordon::runtime {

struct kill_step {
    int signal;
    std::chrono::milliseconds wait;  // before the next step (ignored for the last)
};

struct kill_plan {
    std::vector<kill_step> steps;

    // SIGTERM, then SIGKILL after `grace` (default 3 s).
    [[nodiscard]] static kill_plan standard(
        std::chrono::milliseconds grace = std::chrono::milliseconds(3000)) {
        return kill_plan{{{SIGTERM, grace}, {SIGKILL, std::chrono::milliseconds(0)}}};
    }

    // How long a run may keep its pipes open after its leader exited before the rest of its
    // tree is killed: the same grace as the polite step.
    [[nodiscard]] std::chrono::milliseconds grace() const {
        return steps.empty() ? std::chrono::milliseconds(0) : steps.front().wait;
    }
};

}  // namespace cordon::runtime
