// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A session's durable log: one JSON object per line, appended, and rewritten only by compaction.
// It holds the session's standing choices (`sandbox/mode`, `approval/policy`, `permission/preset`)
// and the audit trail of every approval (`approval/asked`, `approval/decided`,
// `approval/revoked`); the folds below read the effective value of each (the last event wins).
//
//     auto log = std::make_shared<const cordon::session_log>("/home/me/.cordon/app.log");
//     cordon::approval_service approvals({}, log);  // every question and answer is audited
//
// Durability and concurrency: each event is one write(2) of one whole line under an exclusive
// flock(2) of the file, then fsync(2), so two cordon processes appending at once never
// interleave a line, and an append that returned has reached the disk. A line torn by a crash is
// never glued to the next event (the next append starts on a line of its own) and is reported by
// read() with its line number, as is any line that is not a valid event: nothing is skipped
// silently.
//
// Bytes: a command or a path need not be UTF-8. append() escapes bytes that are not UTF-8
// reversibly, as dump() (record_json.hpp) does, and read() unescapes them, so an event reads back
// with the very bytes it was appended with.
//
// No lock is waited on without a bound: whoever can open the file for reading (a confined
// command, a background job, any process of the user) can take its flock and hold it. Readers
// take no lock they wait for: what does not hold (a tail still being appended, a compaction met
// midway) is read again, at once under a shared lock when nobody holds the lock, else until
// lock_wait() is over; an append tries the lock without blocking until lock_wait() is over, then
// fails with a one-line error.
//
// A journal: standing() folds only what was appended since its last call, onto the fold it
// cached (with the byte offset it covers and the file's identity: a log replaced, truncated or
// compacted since is folded again from its start), so that a call costs the new events, not the
// session. compact() rewrites the log, in place and under its lock, to the events that fold to
// the same state, plus the latest events (the audit tail) behind a `session/compacted` line that
// says how many were dropped; an append that would take the log over max_bytes() compacts it
// first, and is refused with one line when even the compacted log has no room for it. In place,
// not renamed over: a rename would detach the mount that hides the log from a run still going
// (session_log_journal.cpp says more).
//
// Trust: the file is created 0600. A log that is not a regular file, is owned by another user or
// is writable by group or others is refused, since whoever can write it can widen the mode of
// every later run. Callers keep it where no confined command can write (runtime: add it to
// executor_options::protected_paths).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/export.hpp"
#include "cordon/mode.hpp"
#include "cordon/network_request.hpp"
#include "cordon/policy.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::policy {

enum class approval_policy {
    ask,    // operations that need approval ask the responders (the default)
    never,  // they are rejected without asking anyone
};

enum class approval_outcome {
    allowed_once,         // this one operation may proceed
    allowed_for_session,  // and the same command prefix under the same mode, until revoked
    rejected,
    cancelled,    // the question was withdrawn, or not answered in time
    unavailable,  // nobody could be asked, or the answer was not an answer
};

[[nodiscard]] std::string_view to_string(approval_policy policy) noexcept;
[[nodiscard]] std::string_view to_string(approval_outcome outcome) noexcept;
// Exact spellings: "ask", "never"; "allowed-once", "allowed-for-session", "rejected",
// "cancelled", "unavailable".
[[nodiscard]] std::optional<approval_policy> parse_approval_policy(std::string_view text) noexcept;
[[nodiscard]] std::optional<approval_outcome> parse_approval_outcome(
    std::string_view text) noexcept;
// True for the two outcomes that let the operation proceed.
[[nodiscard]] constexpr bool is_allowed(approval_outcome outcome) noexcept {
    return outcome == approval_outcome::allowed_once ||
           outcome == approval_outcome::allowed_for_session;
}

// The event types, as spelled in the log's "type" field.
namespace event_type {
inline constexpr std::string_view session_start = "session/start";          // {cwd}
inline constexpr std::string_view sandbox_mode = "sandbox/mode";            // {mode}
inline constexpr std::string_view approval_policy = "approval/policy";      // {policy}
inline constexpr std::string_view permission_preset = "permission/preset";  // {preset}
inline constexpr std::string_view approval_asked = "approval/asked";        // see approval.hpp
inline constexpr std::string_view approval_decided = "approval/decided";    // see approval.hpp
inline constexpr std::string_view approval_revoked = "approval/revoked";    // {grant}
// The first line of a compacted log: {dropped, length, digest}. `dropped` events were left out
// (in all the log's compactions); the `length` bytes that follow this line have the FNV-1a 64
// `digest` (16 hex digits), so that a compaction cut short is a corrupt log, never half-read.
inline constexpr std::string_view session_compacted = "session/compacted";
}  // namespace event_type

struct session_event {
    std::string type;
    nlohmann::json body;   // the whole line, "type" and "at" (ISO 8601, UTC) included
    std::size_t line = 0;  // 1-based
};

// What went wrong, in one line. `line` is the 1-based line of a corrupt event, 0 otherwise.
struct log_error {
    std::string message;
    std::size_t line = 0;
};

// A standing grant: the same command, under the same mode, in the same working directory, is
// allowed without asking (policy/command_prefix.hpp).
struct session_grant {
    std::string id;                   // the approval/decided event's id
    std::vector<std::string> prefix;  // the command's words; its whole text when exact
    bool exact = false;               // a command with shell syntax: only that very text
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    // Where it was asked; empty (a grant logged before grants named one): anywhere.
    std::filesystem::path workdir;
    // The environment the command started with (approval_request::environment); nullopt (a grant
    // logged before grants recorded one): any.
    std::optional<std::vector<std::string>> environment;
    // The network it was granted under (policy and, under proxy, domains): it never covers a
    // call that asks for more. A grant logged without one (before the network policy existed)
    // is read as deny, and one under proxy without domains as proxy to none: fail closed.
    network_request network;
};

// The folds: what the events say, the last event of each kind winning.
struct session_state {
    std::optional<std::filesystem::path> cwd;  // from session/start
    std::optional<sandbox::sandbox_mode> mode;
    std::optional<approval_policy> approval;
    std::optional<std::string> preset;
    std::vector<session_grant> grants;  // allowed-for-session decisions not yet revoked
    // Every event, in order: the audit trail (state(); standing() leaves it empty).
    std::vector<session_event> events;
};

// What compact() did.
struct compaction {
    bool rewritten = false;  // false: nothing could be dropped, the log is as it was
    std::uint64_t bytes_before = 0;
    std::uint64_t bytes_after = 0;
    std::size_t events_before = 0;
    std::size_t events_after = 0;  // the session/compacted line included
    std::size_t dropped = 0;       // events left out by this compaction
};

[[nodiscard]] session_state fold(std::vector<session_event> events);

class session_log {
public:
    // Opens the log at `path`, creating it (0600, with a session/start event recording `cwd`,
    // resolved as chdir(2) would: sandbox::canonical_path) when it does not exist. `path` is made
    // absolute; its directory must exist.
    [[nodiscard]] static std::variant<session_log, log_error> open_or_create(
        const std::filesystem::path& path, const std::filesystem::path& cwd);
    // Opens an existing log; never creates one.
    [[nodiscard]] static std::variant<session_log, log_error> open_existing(
        const std::filesystem::path& path);

    // Appends one event: `event` must be an object with a string "type"; "at" is added. The
    // event is on disk when this returns nullopt.
    [[nodiscard]] std::optional<log_error> append(nlohmann::json event) const;
    // Every event, or the first line that is not one.
    [[nodiscard]] std::variant<std::vector<session_event>, log_error> read() const;
    // read() folded: the trail and the fold. Reads the whole log.
    [[nodiscard]] std::variant<session_state, log_error> state() const;
    // The fold without the trail (`events` empty), read incrementally: only what was appended
    // since the last call on this log (or a copy of it) is read and folded. Thread-safe. A last
    // line without its newline while another process holds the lock (an append under way) is
    // left for the next call, not waited for; with the lock free it is torn, and reported as
    // read() reports it.
    [[nodiscard]] std::variant<session_state, log_error> standing() const;
    // Rewrites the log to what folds to the same state (session/start, the last event of each
    // knob, the live grants with their questions, the questions not yet decided) and the latest
    // events up to a quarter of max_bytes(), under the log's lock. Nothing is rewritten when
    // nothing would be dropped. A corrupt log is reported, never compacted.
    [[nodiscard]] std::variant<compaction, log_error> compact() const;

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

    // How long an append waits for the lock, and a reader for a tail being appended.
    static constexpr std::chrono::milliseconds default_lock_wait{5'000};
    [[nodiscard]] std::chrono::milliseconds lock_wait() const noexcept { return lock_wait_; }
    void set_lock_wait(std::chrono::milliseconds wait) noexcept { lock_wait_ = wait; }

    // The size an append may take the log to; beyond it, it compacts first (compact()), and
    // refuses when that does not make room. 1 MiB: some fifteen hundred questions with their
    // answers, and what a process that starts (each `cordon run --session`) reads and folds
    // whole: a 4 MiB log took 0.1 to 0.3 s to fold on a loaded 2-core machine.
    static constexpr std::uint64_t default_max_bytes = 1u << 20;
    [[nodiscard]] std::uint64_t max_bytes() const noexcept { return max_bytes_; }
    void set_max_bytes(std::uint64_t bytes) noexcept { max_bytes_ = bytes; }

    // The bytes read from the file by this log and its copies, in all: what a call cost (each
    // standing() reads the appended tail, and at most 3 * head_bytes of the first and the last
    // folded lines to notice a rewrite).
    [[nodiscard]] std::uint64_t bytes_read() const noexcept;
    static constexpr std::size_t head_bytes = 128;

private:
    struct journal;  // policy/session_log_io.hpp
    explicit session_log(std::filesystem::path path);
    std::filesystem::path path_;
    std::chrono::milliseconds lock_wait_ = default_lock_wait;
    std::uint64_t max_bytes_ = default_max_bytes;
    std::shared_ptr<journal> journal_;  // shared by copies: they read the same file
};

// Checks one parsed line: a known "type" with the fields that type needs, each in its
// vocabulary (a sandbox/mode of "host-root" is corrupt, not ignored). Unknown types are corrupt
// too: a log is written by cordon alone. Returns the complaint, or nullopt.
[[nodiscard]] std::optional<std::string> invalid_event(const nlohmann::json& event);

}  // namespace cordon::policy

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using policy::approval_outcome;
using policy::approval_policy;
using policy::is_allowed;
using policy::session_log;
using policy::to_string;
}  // namespace cordon
CORDON_PUBLIC_END
