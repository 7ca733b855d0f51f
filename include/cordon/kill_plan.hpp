// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How a run is ended, as data (docs/execution.md, "Ending a run"): the signals sent to the whole
// tree, in order, and how long to wait after each before the next, and how long what a command left
// running may keep its pipes open once the command itself exited. Tests shorten both; callers can
// read them.
//
//     options.plan = cordon::kill_plan::standard(std::chrono::seconds(2));  // TERM, 2 s, KILL
//
// A plan always ends: one whose last step is not SIGKILL is run with a SIGKILL after its last
// wait (ending_in_sigkill()), so no plan the type admits can leave a process running.
#pragma once

#include <signal.h>

#include <chrono>
#include <vector>
#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::runtime {

struct kill_step {
    int signal;
    std::chrono::milliseconds wait;  // before the next step (ignored for a final SIGKILL)
};

struct kill_plan {
    std::vector<kill_step> steps;
    // After the command (the tree's leader) exited on its own, how long the rest of its tree may
    // keep the output pipes open before it is killed.
    std::chrono::milliseconds drain_grace{3000};

    // SIGTERM, then SIGKILL after `grace` (default 3 s); leftovers drain for the same grace.
    [[nodiscard]] static kill_plan standard(
        std::chrono::milliseconds grace = std::chrono::milliseconds(3000)) {
        return kill_plan{{{SIGTERM, grace}, {SIGKILL, std::chrono::milliseconds(0)}}, grace};
    }

    // The plan as it runs: the steps up to the first SIGKILL, with a SIGKILL appended when none
    // was given.
    [[nodiscard]] kill_plan ending_in_sigkill() const {
        kill_plan out{{}, drain_grace};
        for (const kill_step& step : steps) {
            out.steps.push_back(step);
            if (step.signal == SIGKILL) return out;
        }
        out.steps.push_back({SIGKILL, std::chrono::milliseconds(0)});
        return out;
    }
};

}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::kill_plan;
}  // namespace cordon
CORDON_PUBLIC_END
