// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A judgement that is owed, on disk for as long as its run lasts: a cordon killed before it could
// judge what its run left (SIGKILL, a crash) is not the end of it. The next cordon finds the
// window, sees that the cordon which owes it is gone, and judges it by a scan
// (docs/sandbox.md, "Protected names").
//
// One file per run in a directory of cordon's own (/dev/shm/cordon-judgements-<uid>, mode 0700),
// which holds the window (judgement_scope: the roots, the names, what was kept, when it opened)
// and the copies the run will put back (kept_copies), locked with flock(2) by the cordon that owes
// it for as long as it does: a free lock is a dead cordon, the way a private /tmp's is
// (private_tmp.hpp). A record is written under another name and renamed into place whole. The
// directory is protected like the probe verdicts: a writable root that holds it is refused.
//
// The copies are read by the runs that start while this one lasts (kept_copies::take): what it
// put back must be what was there before either began.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cordon/unique_fd.hpp"
#include "sandbox/judgement.hpp"

namespace cordon::sandbox {

// /dev/shm/cordon-judgements-<euid>.
[[nodiscard]] std::filesystem::path default_journal_directory();

// What a record holds.
struct window_record {
    judgement_scope window;
    std::string copies;  // kept_copies::text()
    int attempts = 0;
};

class owed_judgement {
public:
    // A claimed window whose judgement killed its claimant this many times is dropped unjudged
    // (reported), so that one that cannot be judged does not stop every later cordon.
    static constexpr int most_attempts = 3;

    // Writes the window and the copies its run keeps (kept_copies::text) to `directory` (made if
    // missing, 0700, this user's own) and holds its lock; the reason when it cannot. Called under
    // hold_copies(): the record is made a moment before it is locked, and claim_abandoned()
    // claims and removes only under that lock too.
    [[nodiscard]] static std::variant<std::unique_ptr<owed_judgement>, std::string> record(
        const std::filesystem::path& directory, const judgement_scope& window,
        std::string_view copies = {});

    // Takes the window of every cordon that died owing one (its lock free), each now owed by the
    // caller alone, its attempts counted one more. Nothing when the directory does not exist.
    [[nodiscard]] static std::vector<std::unique_ptr<owed_judgement>> claim_abandoned(
        const std::filesystem::path& directory);

    // The records of the runs still going (their locks held), the earliest window first.
    [[nodiscard]] static std::vector<window_record> live_windows(
        const std::filesystem::path& directory);

    // Held while a run takes its copies and records them: a run that starts meanwhile waits, and
    // then sees them. Blocks; an empty descriptor when the directory cannot be used.
    [[nodiscard]] static unique_fd hold_copies(const std::filesystem::path& directory);

    // The judgement was made: the record goes.
    ~owed_judgement();
    owed_judgement(const owed_judgement&) = delete;
    owed_judgement& operator=(const owed_judgement&) = delete;

    [[nodiscard]] const judgement_scope& window() const noexcept { return window_; }
    // How many cordons took it before this one's claim (claim_abandoned), this one included.
    [[nodiscard]] int attempts() const noexcept { return attempts_; }

private:
    owed_judgement(std::filesystem::path file, unique_fd lock, judgement_scope window, int attempts)
        : file_(std::move(file)),
          lock_(std::move(lock)),
          window_(std::move(window)),
          attempts_(attempts) {}

    std::filesystem::path file_;
    unique_fd lock_;
    judgement_scope window_;
    int attempts_ = 0;
};

// A record's fields: a tag, the value's length in decimal, the value, each ended by a NUL (paths
// and copies may hold any byte).
void append_field(std::string& out, std::string_view tag, std::string_view value);
[[nodiscard]] std::optional<std::vector<std::pair<std::string_view, std::string_view>>>
split_fields(std::string_view text);

// The record's text and its reading.
[[nodiscard]] std::string window_text(const judgement_scope& window, std::string_view copies = {});
[[nodiscard]] std::optional<window_record> parse_window(std::string_view text);

}  // namespace cordon::sandbox
