// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What `cordon run` prints when the run has ended, and the code it exits with: the record as JSON
// (--json), or cordon's own lines after the command's live output (the markers of
// runtime/render.hpp, a not-started run's reason, what a slow reader of the live output missed,
// the hint after a denial). The exit codes are the table in commands.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>

#include "cli/live_writer.hpp"
#include "cli/run_options.hpp"
#include "cli/standing.hpp"
#include "cordon/executor.hpp"
#include "cordon/mode.hpp"

namespace cordon::cli {

struct run_report {
    const run_options& options;
    const standing& stand;
    sandbox::sandbox_mode run_mode;  // the mode the command ran under
    // The record's "approval" object, when an escalation was asked and granted.
    const std::optional<nlohmann::json>& approval_record;
    // The writers of the live output (null with --json), finished, and what each dropped.
    const live_writer* live_out = nullptr;
    const live_writer* live_err = nullptr;
    std::uint64_t dropped_out = 0;
    std::uint64_t dropped_err = 0;
    // The signal that made cordon cancel the run (SIGPIPE: its reader went away), or 0.
    int interrupted_by = 0;
    // A reader of the live output went away: cordon says nothing of how the run ended, as a
    // shell says nothing of a command SIGPIPE ended, nor of the bytes that reader missed.
    bool reader_gone = false;
};

// Prints what `result` says and returns cordon's exit code for it.
[[nodiscard]] int report_run(const runtime::run_record& record, const run_report& report);

}  // namespace cordon::cli
