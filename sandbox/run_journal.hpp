// A judgement that is owed, on disk for as long as its run lasts: a cordon killed before it could
// judge what its run left (SIGKILL, a crash) is not the end of it. The next cordon finds the
// window, sees that the cordon which owes it is gone, and judges it by a scan
// (docs/sandbox.md, "What a run leaves").
//
// One file per run in a directory of cordon's own (/dev/shm/cordon-judgements-<uid>, mode 0700),
// which holds the window (judgement_scope: the roots, the names, what was kept, when it opened),
// locked with flock(2) by the cordon that owes it for as long as it does: a free lock is a dead
// cordon, the way a private /tmp's is (private_tmp.hpp). The directory is protected like the probe
// verdicts: a writable root that holds it is refused.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/unique_fd.hpp"
#include "sandbox/judgement.hpp"

namespace cordon::sandbox {

// /dev/shm/cordon-judgements-<euid>.
[[nodiscard]] std::filesystem::path default_journal_directory();

class owed_judgement {
public:
    // Writes the window to `directory` (made if missing, 0700, this user's own) and holds its
    // lock; the reason when it cannot.
    [[nodiscard]] static std::variant<std::unique_ptr<owed_judgement>, std::string> record(
        const std::filesystem::path& directory, const judgement_scope& window);

    // Takes the window of every cordon that died owing one (its lock free), each now owed by the
    // caller alone. Nothing when the directory does not exist.
    [[nodiscard]] static std::vector<std::unique_ptr<owed_judgement>> claim_abandoned(
        const std::filesystem::path& directory);

    // The judgement was made: the record goes.
    ~owed_judgement();
    owed_judgement(const owed_judgement&) = delete;
    owed_judgement& operator=(const owed_judgement&) = delete;

    [[nodiscard]] const judgement_scope& window() const noexcept { return window_; }

private:
    owed_judgement(std::filesystem::path file, unique_fd lock, judgement_scope window)
        : file_(std::move(file)), lock_(std::move(lock)), window_(std::move(window)) {}

    std::filesystem::path file_;
    unique_fd lock_;
    judgement_scope window_;
};

// The record's text and its reading (NUL-separated fields: paths may hold any other byte).
[[nodiscard]] std::string window_text(const judgement_scope& window);
[[nodiscard]] std::optional<judgement_scope> parse_window(std::string_view text);

}  // namespace cordon::sandbox
