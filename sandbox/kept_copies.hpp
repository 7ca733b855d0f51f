// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How a rung without mounts keeps a protected path: a copy taken before the run, put back after
// it when the run changed it (the changed one goes to the quarantine). The Landlock rung grants
// write to a whole tree and cannot keep a path in it read-only; this is how it keeps what bwrap
// binds read-only (path_plan.hpp), with a window: while the run lasts, the change is there.
//
// Bounded: a path whose copy would exceed the bounds is not kept this way and is judged instead
// (judgement.hpp), like anything else a run changes.
//
// Runs in one workspace at once share what they put back: a run that starts while another lasts
// takes the other's copies (recorded in its window, run_journal.hpp) rather than the state the
// other may have changed, which it would otherwise put back as its own. A file that gained a name
// (a hard link a command could write through) is not the same file any more and is put back too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/confined_argv.hpp"
#include "sandbox/quarantine.hpp"

namespace cordon::sandbox {

class kept_copies {
public:
    // A file larger than this, or paths holding more bytes or entries together, are not copied.
    static constexpr std::uint64_t file_limit = std::uint64_t{1} << 20;
    static constexpr std::uint64_t total_limit = std::uint64_t{8} << 20;
    static constexpr std::size_t entry_limit = 4096;

    // A run still going in the same roots (its window, run_journal.hpp).
    struct earlier_run {
        std::vector<std::filesystem::path> roots;
        std::vector<std::filesystem::path> kept;  // kept read-only: it changed none of them
        const kept_copies* copies = nullptr;      // what it will put back, if anything
    };

    // Copies each of `paths` (canonical, each beneath one of `roots`) that exists. Where a run
    // still going (`earlier`, the earliest first) may write a path, the state there now is not
    // what was before: the path is taken from that run's copy, or, when it has none (the path
    // appeared while it ran), not kept (it is judged instead).
    [[nodiscard]] static kept_copies take(std::span<const std::filesystem::path> paths,
                                          std::span<const std::filesystem::path> roots,
                                          std::span<const earlier_run> earlier = {});

    // The copies as text (the journal's fields, run_journal.hpp), and back; nullopt when the text
    // is not one.
    [[nodiscard]] std::string text() const;
    [[nodiscard]] static std::optional<kept_copies> parse(std::string_view text);

    kept_copies();
    ~kept_copies();
    kept_copies(kept_copies&&) noexcept;
    kept_copies& operator=(kept_copies&&) noexcept;

    // The paths copied: kept, and never judged.
    [[nodiscard]] std::vector<std::filesystem::path> covered() const;

    // Puts back every copied path the run changed, its changed state into `away`; one entry per
    // path put back.
    [[nodiscard]] std::vector<neutralized_path> restore(quarantine& away) const;

    struct node;

private:
    struct kept {
        std::filesystem::path root;
        std::filesystem::path path;
        std::shared_ptr<const node> copy;
    };
    std::vector<kept> kept_;
    std::vector<std::filesystem::path> unkept_;  // asked for, missing or too large: judged
};

}  // namespace cordon::sandbox
