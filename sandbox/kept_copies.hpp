// How a rung without mounts keeps a protected path: a copy taken before the run, put back after
// it when the run changed it (the changed one goes to the quarantine). The Landlock rung grants
// write to a whole tree and cannot keep a path in it read-only; this is how it keeps what bwrap
// binds read-only (path_plan.hpp), with a window: while the run lasts, the change is there.
//
// Bounded: a path whose copy would exceed the bounds is not kept this way and is judged instead
// (judgement.hpp), like anything else a run changes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
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

    // Copies each of `paths` (canonical, each beneath one of `roots`) that exists.
    [[nodiscard]] static kept_copies take(std::span<const std::filesystem::path> paths,
                                          std::span<const std::filesystem::path> roots);

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
        std::unique_ptr<node> copy;
    };
    std::vector<kept> kept_;
};

}  // namespace cordon::sandbox
