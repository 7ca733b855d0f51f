// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The human rendering of a record (docs/contract.md, "Markers"): the output, then one marker per
// line in a fixed order, chosen by the outcome: for a command that never ran, why; otherwise the
// denial, the timeout, the memory limit or the cancellation, then the signal or the non-zero exit
// code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/record.hpp"

namespace cordon::runtime {

// "[sandbox: the sandbox runner itself failed under <mode> mode — ...]\n": the command never ran.
[[nodiscard]] std::string runner_failed_marker(sandbox::sandbox_mode mode);

// One marker per path the judgement of what a workspace-write run left took away
// ("[sandbox: quarantined <path> after the run: <what>; kept at <where>]"), at most ten, then
// how many more; why the judgement may be partial, if it may; and, the same way, what runs whose
// cordon died had left (", left by a run whose cordon died: <what>").
[[nodiscard]] std::string judgement_markers(const sandbox::judgement_report& judged);

// "[sandbox: file access denied under <mode> mode]" and the other markers, each ending in '\n'.
// A runner_failed record whose runner never ran (no backend could enforce the mode) has
// "[sandbox unavailable: <message>]" instead of the runner-failed marker.
// `denial_hint`, when not empty, follows the denial marker (one line with its newline: how to
// retry wider, when that could work; policy::escalation_hint and cli_escalation_hint).
// `with_end` false leaves out the lines of how the run ended (timed out, aborted, the signal,
// the exit code), for a caller that has its own way of saying it.
[[nodiscard]] std::string render_markers(const run_record& record,
                                         std::string_view denial_hint = {}, bool with_end = true);

// What a retry hint after a network denial may offer to ask for.
struct network_retry {
    // The first destination the proxy refused that a person could be asked to open (askable:
    // a name no pattern covers, a public address of another host), as the pattern that opens
    // exactly it: its host and port ("registry.npmjs.org:443", "[2606:4700::1]:443").
    std::optional<std::string> destination;
    // Whether the host's whole network may be offered: only when the proxy refused nothing, the
    // walls refused only public addresses of other hosts (and name servers), and no
    // denied_domains stands. A refusal that asking cannot lift (denied, loopback, private, the
    // host's own address, a name that is no host name) is never answered by offering everything.
    bool whole_network = false;
};
[[nodiscard]] network_retry network_retry_after(const sandbox_facts& facts);

// The output section: stdout, then "[stderr]\n" + stderr, truncation notices with the spill path,
// "(no output)" when both are empty.
[[nodiscard]] std::string render_output(const run_record& record);

// "64 MiB", "2 GiB", "1000000 bytes": a memory limit as people give it.
[[nodiscard]] std::string memory_size(std::uint64_t bytes);

// render_output followed by render_markers.
[[nodiscard]] std::string render(const run_record& record);

}  // namespace cordon::runtime
