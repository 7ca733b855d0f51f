// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What a tool call shows of a job: a window on one of its output streams, rendered twice, as the
// human text (the output, then the markers `cordon run` prints, then a status line) and as the
// structured record that the tools' outputSchema describes. Every tool that returns a job (bash,
// job_output, job_write, job_kill) returns this one shape.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/jobs.hpp"

namespace cordon::mcp {

// A stretch of a stream: the bytes shown, cut on UTF-8 character boundaries.
struct window {
    std::string text;
    std::uint64_t offset = 0;       // where the stretch starts
    std::uint64_t next_offset = 0;  // where the next read should start
    std::uint64_t omitted = 0;      // bytes in [offset, next_offset) that `text` leaves out
    std::string omitted_note;       // says which, and how to read them
    bool lossy = false;             // bytes before `offset` that were asked for are gone
    bool complete = false;          // the stream ended at next_offset
    bool filled = false;            // the read stopped at its byte limit, not at the end
    bool filtered = false;          // only the lines a filter kept are in `text`
};

// Up to `max_bytes` from `offset`. A read that would cut a character short stops before it,
// unless the stream has ended.
[[nodiscard]] window read_window(const runtime::job& job, runtime::job_output which,
                                 std::uint64_t offset, std::size_t max_bytes);

// All of the stream from 0 if it fits in `budget`; else its first fifth and its last four fifths,
// with a note in between that names the omitted offsets.
[[nodiscard]] window read_head_and_tail(const runtime::job& job, runtime::job_output which,
                                        std::size_t budget);

// Keeps the whole lines of `read` that `keep` accepts. The offsets still span every line read
// (nothing is consumed: the same offset reads the same lines again); a last line without its
// newline is left for the next read unless the stream ended. A line longer than a whole window
// is judged in window-sized pieces, so that reading always moves on.
[[nodiscard]] window keep_lines(window read, const std::function<bool(std::string_view)>& keep);

// A job under a terminal is shown by its screen (docs/terminal.md): the rows down to the last
// that is not blank, then a line that gives the size, the cursor, the title and whether the
// alternate screen is up, as the window's text; the output read up to the screen's offset.
// Complete once `snapshot` (taken before the screen, as for view()) saw the job settled and the
// screen shows all of its output: then the result says how it ended, as for any job.
// Cuts `screen` to `budget` bytes of text, as a result holds: the oldest scrollback lines
// first, then the attributes, then each row's end (on a character). True when anything was cut
// (screen_window then says so).
bool fit_screen(runtime::terminal_screen& screen, std::size_t budget);
[[nodiscard]] window screen_window(const runtime::terminal_screen& screen, bool cut,
                                   const runtime::job_snapshot& snapshot);
// The screen in a result's structured content: rows (down to the last that is not blank),
// cursor, size, title, alternateScreen, and attributes and scrollback when they were asked for.
[[nodiscard]] nlohmann::json screen_json(const runtime::terminal_screen& screen);

struct job_view {
    nlohmann::json structured;
    std::string text;
    bool is_error = false;  // the job never ran: the sandbox or the request failed
};

// Shows `screen` in `shown`, a view of a window from screen_window(), instead of bytes.
void show_screen(job_view& shown, const runtime::terminal_screen& screen);

// `snapshot` is taken by the caller before the read, so that a job seen settled has all of its
// output in the window's stream. `denial_hint`, when not empty, follows the denial marker
// (policy::escalation_hint, when a retry could be allowed).
[[nodiscard]] job_view view(const runtime::job& job, const runtime::job_snapshot& snapshot,
                            const window& shown, std::string_view denial_hint = {});

// A job result as a model is given it unless it asks for `verbose`: what it needs to act, and
// nothing that says what it already knows or what did not happen. Kept: job_id, status, output,
// nextOffset, the exit code or signal, an error or message, what was omitted or lost and the spill
// file that holds it, an escalation's approval, killed / written, runningForMs while running, and
// of the sandbox its mode and enforcement, a denial with what the network blocked, the gaps of a
// partial run and what the judgement took. Left out: every false flag and null, offset 0, complete,
// the outcome when it is "exited", the byte counts, the label, the backend and the policy's lists.
[[nodiscard]] nlohmann::json compact(const nlohmann::json& full);

// What every result that names a job says of it: how its run ended (runtime::ending_json: outcome,
// exitCode, signal, timedOut, aborted, sandbox with runnerFailed, error) plus job_id, status and
// runningForMs. view() and job_list add their own fields to it.
[[nodiscard]] nlohmann::json ending_json(const runtime::job_snapshot& snapshot);
[[nodiscard]] std::string duration_text(std::chrono::milliseconds elapsed);
[[nodiscard]] std::chrono::milliseconds running_for(const runtime::job_snapshot& snapshot);

}  // namespace cordon::mcp
