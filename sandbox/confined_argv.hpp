// What confine() returns: the argv to spawn instead of the caller's, plus everything a consumer
// needs to classify the run afterwards without knowing which backend produced it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/mode.hpp"

namespace cordon::sandbox {

enum class backend_kind { bwrap, landlock, seatbelt };

[[nodiscard]] std::string_view to_string(backend_kind kind) noexcept;
[[nodiscard]] std::optional<backend_kind> parse_backend_kind(std::string_view text) noexcept;

// Heuristic, stderr-only evidence that the runner itself failed (reference 5.1-5.2). Kept for
// consumers that only have stderr; cordon's own executor decides by the status channel first.
struct runner_failure_rule {
    std::vector<int> allowed_exit_codes;           // empty: any non-zero exit qualifies
    std::vector<std::string> fatal_signatures;     // case-insensitive substrings of one line
    std::vector<std::string> informational_lines;  // whole lines (case-insensitive) never fatal
};

// The out-of-band runner-status channel. The spawner creates a pipe and places its write end at
// `child_fd` in the child. `bwrap_json`: bwrap's --json-status-fd stream; the command ran iff it
// holds an "exit-code" record. `launcher_record`: cordon-landlock writes one fixed
// launcher_status_record on failure and nothing on a successful exec (the fd is CLOEXEC).
struct status_channel {
    enum class protocol { bwrap_json, launcher_record };
    protocol kind;
    int child_fd;
};

// An executable image held open by fd (CLOEXEC), closed with the last owner.
class runner_image {
public:
    explicit runner_image(int fd) noexcept : fd_(fd) {}
    ~runner_image();
    runner_image(const runner_image&) = delete;
    runner_image& operator=(const runner_image&) = delete;
    [[nodiscard]] int fd() const noexcept { return fd_; }

private:
    int fd_;
};

struct confined_argv {
    std::vector<std::string> argv;  // runner, profile arguments, "--", the caller's argv
    enforcement level = enforcement::full;
    backend_kind backend = backend_kind::bwrap;
    std::vector<std::string> denial_signatures;  // case-insensitive stderr substrings
    std::vector<runner_failure_rule> runner_failure_rules;
    std::optional<status_channel> status;  // absent for runners without one (Seatbelt)
    // When set: a sealed, read-only in-memory copy of the runner (argv[0]) that the spawner
    // executes instead of the file at argv[0], so that nothing written to that path after the
    // provider loaded it can take the runner's place. Shared, so that it outlives the provider
    // for as long as a pending spawn needs it.
    std::shared_ptr<const runner_image> runner;
};

}  // namespace cordon::sandbox
