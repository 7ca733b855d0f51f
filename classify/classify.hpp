// Ordered result classification (DESIGN.md, "Classification order"):
//   1. runner failure — proven out of band first (the launcher's status record; bwrap exiting on
//      its own with no "exit-code" status record), then, only for runners without a status
//      channel, the backend's stderr rules; the command never ran;
//   2. otherwise a denial — a non-zero, non-signal exit whose stderr carried the backend's denial
//      dialect.
// A command that prints "bwrap: ..." and exits 125 is an ordinary result whenever the status
// channel proved that it ran.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sandbox/confined_argv.hpp"

namespace cordon::classify {

// What the status channel established.
enum class runner_status {
    no_channel,       // the runner has none (Seatbelt): fall back to the stderr rules
    command_started,  // proof that the command ran
    runner_failed,    // proof that it did not: `detail` holds the runner's line
    no_proof,         // the channel closed without either (bwrap died before "exit-code")
};

struct run_evidence {
    std::optional<int> exit_code;   // nullopt when killed by a signal
    bool killed_by_cordon = false;  // cordon's timeout or the caller's cancellation ended it
    runner_status status = runner_status::no_channel;
    std::string status_detail;  // the launcher record's message, when runner_failed
    std::string_view stderr_tail;
    bool denial_seen = false;  // the signature scanner matched the whole stderr stream
};

struct verdict {
    std::optional<std::string> runner_failure;  // set: the command never ran; the runner's line
    bool denied = false;
};

[[nodiscard]] verdict classify(const sandbox::confined_argv& confined,
                               const run_evidence& evidence);

// The stderr-only heuristic (reference 5.2): for each rule, skip it unless the exit code is
// allowed (any non-zero when the list is empty); ignore lines equal to an informational line;
// return the first original line containing a fatal signature.
[[nodiscard]] std::optional<std::string> match_runner_failure(
    std::optional<int> exit_code, std::string_view stderr_text,
    std::span<const sandbox::runner_failure_rule> rules);

// The denial dialect on a retained text: non-zero, non-signal exit and a signature present.
[[nodiscard]] bool matches_denial(std::optional<int> exit_code, std::string_view stderr_text,
                                  std::span<const std::string> signatures);

}  // namespace cordon::classify
