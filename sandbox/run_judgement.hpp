// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// One workspace-write run's judgement, from before its command starts until every process of it is
// gone (docs/sandbox.md, "Protected names"): the window opens (a change_watch, or the time the
// scan will compare with), the paths kept by copy are copied, the window is recorded as owed; once
// the run is over, what it changed is found, the kept paths are put back, the rest is judged, and
// the record of the window goes.
//
// confine() makes one and hands it to whoever runs the argv, in confined_argv::judgement: the
// executor calls finish() for the record; a caller that spawns the argv itself only has to let the
// last reference go once the run is over, and the judgement is made then (its report only logged).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/mountinfo.hpp"
#include "cordon/confined_argv.hpp"
#include "sandbox/judgement.hpp"

namespace cordon::sandbox {

class change_watch;
class kept_copies;
class owed_judgement;

class run_judgement {
public:
    struct settings {
        // The roots, names, paths kept read-only by the runner, and what the plan found beyond
        // the names; `since` is set when the window opens.
        judgement_scope scope;
        // Kept by copy (a rung without mounts): copied now, put back after the run.
        std::vector<std::filesystem::path> copied;
        std::vector<base::mount_entry> mounts;  // for the mounts beneath the roots
        // Where else the run may write on the roots' filesystems (the Landlock rung's private
        // /tmp): the watch looks there too, for files with a second name beneath the roots.
        std::vector<std::filesystem::path> elsewhere;
        std::string kept;                       // judgement_report::kept
        std::filesystem::path journal;          // where the window is owed; empty: nowhere
        std::filesystem::path quarantine_home;  // empty: what is taken away is removed
        bool watch = true;                      // false: always scan (tests of the scan)
        // Judged already (windows dead cordons left): reported beside this run's, as
        // judgement_report::abandoned.
        std::vector<neutralized_path> abandoned;
    };

    // Opens the window. Never fails: where no watch can be opened the run is scanned afterwards.
    [[nodiscard]] static std::shared_ptr<run_judgement> start(settings given);

    ~run_judgement();
    run_judgement(const run_judgement&) = delete;
    run_judgement& operator=(const run_judgement&) = delete;

    // Judges the window; call once every process of the run is gone. Later calls return the same.
    [[nodiscard]] judgement_report finish();

private:
    explicit run_judgement(settings given);

    settings settings_;
    std::unique_ptr<kept_copies> copies_;
    std::unique_ptr<change_watch> watch_;
    std::string unwatched_;  // why there is no watch
    std::unique_ptr<owed_judgement> owed_;
    long long clock_offset_ = 0;  // CLOCK_REALTIME minus CLOCK_BOOTTIME when the window opened
    std::mutex mutex_;
    std::optional<judgement_report> report_;
};

// Judges, by a scan each, the windows of the cordons that died owing one (run_journal.hpp);
// what was neutralized.
[[nodiscard]] std::vector<neutralized_path> judge_abandoned_windows(
    const std::filesystem::path& journal, const std::filesystem::path& quarantine_home);

}  // namespace cordon::sandbox
