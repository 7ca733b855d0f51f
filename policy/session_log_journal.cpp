// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The session log as a journal (cordon/session_log.hpp): reading it so that a compaction running
// meanwhile is never half-seen, folding only what was appended since the last call, and
// compacting it.
//
// Compaction rewrites the file in place, under its exclusive lock, rather than writing a new
// file and renaming it over the log. A run of the session cannot read its log because the
// backend lays something over that path (bwrap: an empty file bound over it), and a rename over
// a path detaches the mounts on it in every namespace (Linux since 3.18): a bwrap run still
// going would read the new log, with the environment and input of earlier runs. In place, the
// inode stays the one under the mount. (open_or_create() links a new log into place, but no run
// of the session exists before its log does.)
//
// Readers take no lock (a holder could keep it), so a rewrite in place must not be half-seen:
//   - compaction writes the new first line (session/compacted) alone and syncs it, then the
//     rest, then truncates: a reader that saw a byte of the rest sees the new first line too;
//   - a reader reads the log's first head_bytes before and after the rest: a difference is a
//     compaction (or a replacement) met midway, and it reads again;
//   - the session/compacted line holds the length and FNV-1a digest of the bytes after it: a
//     reader that came after the first line was written, and a log whose compaction a crash cut
//     short, do not match it;
//   - whatever does not hold (a changed head, a digest, a corrupt line, a torn tail) is read
//     again while another process holds the lock, up to lock_wait(), or at once under a shared
//     lock when none does; what still does not hold is reported.
// A crash in the middle of a compaction leaves a log that does not match its digest: reported,
// never half-read, as a crash in the middle of an append leaves a torn line.
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/json_text.hpp"
#include "policy/session_log_io.hpp"

namespace cordon::policy {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using detail::errno_text;

std::string digest_of(std::string_view bytes) {
    std::uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits
    for (const char c : bytes) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ull;
    }
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
    return text;
}

log_error torn(std::size_t line) {
    return log_error{"the last line is torn (it has no newline: an append was cut short)", line};
}

// The file read through pread(2) (its description's offset is never used), every byte counted.
class file_reader {
public:
    file_reader(int fd, const fs::path& path, std::atomic<std::uint64_t>& read)
        : fd_(fd), path_(path), read_(read) {}

    // From `from` to the end of the file.
    std::optional<log_error> rest(std::uint64_t from, std::string& text) const {
        text.clear();
        char buffer[64 * 1024];
        for (;;) {
            const ssize_t n =
                ::pread(fd_, buffer, sizeof buffer, static_cast<off_t>(from + text.size()));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return log_error{errno_text("cannot read session log", path_)};
            if (n == 0) return std::nullopt;
            read_ += static_cast<std::uint64_t>(n);
            text.append(buffer, static_cast<std::size_t>(n));
        }
    }

    // Up to `size` bytes at `at`, fewer at the end of the file.
    std::optional<log_error> window(std::uint64_t at, std::size_t size, std::string& text) const {
        text.assign(size, '\0');
        std::size_t got = 0;
        while (got < size) {
            const ssize_t n =
                ::pread(fd_, text.data() + got, size - got, static_cast<off_t>(at + got));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return log_error{errno_text("cannot read session log", path_)};
            if (n == 0) break;
            got += static_cast<std::size_t>(n);
        }
        read_ += got;
        text.resize(got);
        return std::nullopt;
    }

    // The first head_bytes, cut after the first newline: what an append never changes.
    std::optional<log_error> head(std::string& text) const {
        if (auto failed = window(0, session_log::head_bytes, text)) return failed;
        if (const auto newline = text.find('\n'); newline != std::string::npos) {
            text.resize(newline + 1);
        }
        return std::nullopt;
    }

    // The first head_bytes before, the rest from `from`, the first head_bytes after: `changed`
    // when the two heads differ (a compaction met midway).
    std::optional<log_error> look(std::uint64_t from, std::string& head, std::string& text,
                                  bool& changed) const {
        std::string after;
        if (auto failed = this->head(head)) return failed;
        if (auto failed = rest(from, text)) return failed;
        if (auto failed = this->head(after)) return failed;
        changed = head != after;
        return std::nullopt;
    }

private:
    int fd_;
    const fs::path& path_;
    std::atomic<std::uint64_t>& read_;
};

log_error changed_midway(const fs::path& path) {
    return log_error{"session log " + path.string() +
                     " changed while it was read (compacted or replaced meanwhile)"};
}

// What scan() made of a stretch of the log.
struct scanned {
    std::size_t consumed = 0;  // the bytes of the whole lines read
    std::size_t last = 0;      // where the last of them starts
    std::size_t lines = 0;
    bool partial = false;  // a last line without its newline, left unread
    std::optional<log_error> error;
};

// The whole lines of `text`, numbered from `first`, each handed to `each(event, line)` (the line
// with its newline). `at_start`: `text` begins at the log's first byte, the only place for a
// session/compacted line, which must match the bytes it vouches for.
template <class Each>
scanned scan(std::string_view text, std::size_t first, bool at_start, Each&& each) {
    scanned out;
    while (out.consumed < text.size()) {
        const std::size_t start = out.consumed;
        const std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            out.partial = true;
            break;
        }
        const std::size_t number = first + out.lines;
        auto parsed = detail::parse_line(text.substr(start, end - start), number);
        if (auto* error = std::get_if<log_error>(&parsed)) {
            out.error = std::move(*error);
            break;
        }
        auto& event = std::get<session_event>(parsed);
        if (event.type == event_type::session_compacted) {
            if (!at_start || number != 1) {
                out.error = log_error{"session/compacted is not the log's first line", number};
                break;
            }
            const auto length = event.body["length"].get<std::uint64_t>();
            const std::string_view covered = text.substr(end + 1);
            if (covered.size() < length ||
                digest_of(covered.substr(0, length)) != event.body["digest"]) {
                out.error = log_error{
                    "the compacted log does not match its digest (its compaction was cut short, "
                    "or it was changed by hand)",
                    number};
                break;
            }
        }
        each(event, text.substr(start, end + 1 - start));
        out.last = start;
        ++out.lines;
        out.consumed = end + 1;
    }
    return out;
}

// How a look at the log went, for settle().
enum class looked {
    settled,     // its result is the answer
    mid_append,  // a last line being appended was left for the next call
    unsettled,   // something did not hold: a compaction or an append may be under way
};

// One look, and more while the answer may be a writer's work in progress: at once under a
// shared lock when no process holds the lock, until `wait` is over while one does. A last line
// being appended is not waited for.
template <class Attempt>
auto settle(int fd, std::chrono::milliseconds wait, Attempt&& attempt) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        looked how = looked::settled;
        auto result = attempt(false, how);
        if (how == looked::settled) return result;
        int locked = ::flock(fd, LOCK_SH | LOCK_NB);
        while (locked != 0 && errno == EINTR)
            locked = ::flock(fd, LOCK_SH | LOCK_NB);
        if (locked == 0) {
            looked ignored = looked::settled;
            auto again = attempt(true, ignored);
            ::flock(fd, LOCK_UN);
            return again;
        }
        if (errno != EWOULDBLOCK || how == looked::mid_append ||
            std::chrono::steady_clock::now() >= deadline) {
            return result;
        }
        ::poll(nullptr, 0, detail::lock_poll_ms);
    }
}

bool same_grant(const session_grant& a, const session_grant& b) {
    return a.id == b.id && a.prefix == b.prefix && a.exact == b.exact && a.mode == b.mode &&
           a.workdir == b.workdir && a.environment == b.environment && a.network == b.network;
}

bool same_fold(const session_state& a, const session_state& b) {
    return a.cwd == b.cwd && a.mode == b.mode && a.approval == b.approval && a.preset == b.preset &&
           std::equal(a.grants.begin(), a.grants.end(), b.grants.begin(), b.grants.end(),
                      same_grant);
}

// Which events a compaction keeps: the last of each kind the fold reads, the decisions that gave
// the live grants (as fold_event() makes them) and the questions they answered, the questions
// not decided yet, and the latest events up to `tail` bytes.
std::vector<bool> to_keep(const std::vector<session_event>& events,
                          const std::vector<std::string_view>& lines, std::uint64_t tail) {
    std::vector<bool> keep(events.size(), false);
    for (const std::string_view kind :
         {event_type::session_start, event_type::sandbox_mode, event_type::approval_policy,
          event_type::permission_preset}) {
        for (std::size_t i = events.size(); i-- > 0;) {
            if (events[i].type == kind) {
                keep[i] = true;
                break;
            }
        }
    }
    std::vector<std::pair<std::string, std::size_t>> live;  // a grant's id, its decision
    std::set<std::string> decided;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const json& body = events[i].body;
        if (events[i].type == event_type::approval_decided) {
            const std::string id = body["id"].get<std::string>();
            decided.insert(id);
            if (parse_approval_outcome(body["outcome"].get<std::string>()) ==
                    approval_outcome::allowed_for_session &&
                body["grant"].value("id", id) == id) {
                live.emplace_back(id, i);
            }
        } else if (events[i].type == event_type::approval_revoked) {
            const std::string id = body["grant"].get<std::string>();
            std::erase_if(live, [&id](const auto& grant) { return grant.first == id; });
        }
    }
    std::set<std::string> granted;
    for (const auto& [id, decision] : live) {
        keep[decision] = true;
        granted.insert(id);
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (events[i].type != event_type::approval_asked) continue;
        const std::string id = events[i].body["id"].get<std::string>();
        if (granted.contains(id) || !decided.contains(id)) keep[i] = true;
    }
    std::uint64_t used = 0;
    for (std::size_t i = events.size(); i-- > 0;) {
        if (used + lines[i].size() > tail) break;
        used += lines[i].size();
        keep[i] = true;
    }
    return keep;
}

bool pwrite_all(int fd, std::string_view data, std::uint64_t at) {
    while (!data.empty()) {
        const ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
        at += static_cast<std::uint64_t>(n);
    }
    return true;
}

}  // namespace

std::variant<std::vector<session_event>, log_error> session_log::read() const {
    auto opened = detail::open_log(path_, O_RDONLY);
    if (auto* error = std::get_if<log_error>(&opened)) return *error;
    const unique_fd& fd = std::get<unique_fd>(opened);
    const file_reader file(fd.get(), path_, journal_->read);
    // A last line being appended is read again once its append is over (a torn line then, left
    // by a crash) or the wait is over (the lock is someone else's): read() is the whole trail.
    const auto attempt = [&](bool,
                             looked& how) -> std::variant<std::vector<session_event>, log_error> {
        std::string head;
        std::string text;
        bool changed = false;
        if (auto failed = file.look(0, head, text, changed)) return *failed;
        if (changed) {
            how = looked::unsettled;
            return changed_midway(path_);
        }
        std::vector<session_event> events;
        const scanned got = scan(text, 1, true, [&events](session_event& event, std::string_view) {
            events.push_back(std::move(event));
        });
        if (got.error || got.partial) how = looked::unsettled;
        if (got.error) return *got.error;
        if (got.partial) return torn(got.lines + 1);
        return events;
    };
    return settle(fd.get(), lock_wait_, attempt);
}

std::variant<session_state, log_error> session_log::standing() const {
    auto opened = detail::open_log(path_, O_RDONLY);
    if (auto* error = std::get_if<log_error>(&opened)) return *error;
    const unique_fd& fd = std::get<unique_fd>(opened);
    const file_reader file(fd.get(), path_, journal_->read);
    journal& cache = *journal_;
    const std::lock_guard lock(cache.mutex);
    const auto attempt = [&](bool locked, looked& how) -> std::variant<session_state, log_error> {
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0) return log_error{errno_text("cannot inspect", path_)};
        // The cache holds while the file is the same inode, no shorter, with the same first
        // line and last folded line: a log replaced, truncated or compacted is folded again from
        // its start.
        std::string head;
        if (auto failed = file.head(head)) return *failed;
        bool reuse = cache.valid && cache.device == st.st_dev && cache.inode == st.st_ino &&
                     static_cast<std::uint64_t>(st.st_size) >= cache.offset && cache.head == head;
        if (reuse && !cache.last_head.empty()) {
            std::string last;
            if (auto failed = file.window(cache.last, cache.last_head.size(), last)) return *failed;
            reuse = last == cache.last_head;
        }
        const std::uint64_t from = reuse ? cache.offset : 0;
        std::string text;
        std::string after;
        if (auto failed = file.rest(from, text)) return *failed;
        if (auto failed = file.head(after)) return *failed;
        if (after != head) {
            how = looked::unsettled;
            return changed_midway(path_);
        }
        session_state state = reuse ? cache.state : session_state{};
        const std::size_t lines = reuse ? cache.lines : 0;
        const scanned got = scan(text, lines + 1, from == 0,
                                 [&state](const session_event& event, std::string_view) {
                                     detail::fold_event(state, event);
                                 });
        if (got.error) {
            how = looked::unsettled;
            return *got.error;
        }
        // Under the shared lock no append is under way: a last line without its newline is torn.
        if (got.partial && locked) return torn(lines + got.lines + 1);
        if (got.partial) how = looked::mid_append;
        cache.valid = true;
        cache.device = st.st_dev;
        cache.inode = st.st_ino;
        cache.offset = from + got.consumed;
        cache.lines = lines + got.lines;
        if (got.lines > 0) {
            cache.last = from + got.last;
            cache.last_head = text.substr(
                got.last, std::min<std::size_t>(session_log::head_bytes, got.consumed - got.last));
        } else if (!reuse) {
            cache.last_head.clear();
        }
        cache.head = std::move(head);
        cache.state = state;
        return state;
    };
    return settle(fd.get(), lock_wait_, attempt);
}

std::variant<compaction, log_error> session_log::compact() const {
    auto opened = detail::open_log(path_, O_RDWR);
    if (auto* error = std::get_if<log_error>(&opened)) return *error;
    const unique_fd& fd = std::get<unique_fd>(opened);
    if (auto refused = detail::lock_for_append(fd.get(), path_, lock_wait_)) return *refused;
    return detail::compact_locked(fd.get(), path_, max_bytes_, journal_->read);
}

std::variant<compaction, log_error> detail::compact_locked(int fd, const fs::path& path,
                                                           std::uint64_t max_bytes,
                                                           std::atomic<std::uint64_t>& read) {
    // Under the exclusive lock no append is under way: what is read is the whole log.
    const file_reader file(fd, path, read);
    std::string text;
    if (auto failed = file.rest(0, text)) return *failed;
    std::vector<session_event> events;
    std::vector<std::string_view> lines;
    const scanned got = scan(text, 1, true, [&](session_event& event, std::string_view line) {
        events.push_back(std::move(event));
        lines.push_back(line);
    });
    if (got.error) return *got.error;
    if (got.partial) return torn(got.lines + 1);

    compaction out;
    out.bytes_before = out.bytes_after = text.size();
    out.events_before = out.events_after = events.size();
    const std::vector<bool> keep = to_keep(events, lines, max_bytes / 4);
    std::uint64_t dropped = 0;  // by the compactions before
    std::size_t newly = 0;
    std::string rest;
    std::vector<session_event> kept;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (events[i].type == event_type::session_compacted) {
            dropped += events[i].body["dropped"].get<std::uint64_t>();
        } else if (keep[i]) {
            rest += lines[i];  // as it was written, byte for byte
            kept.push_back(events[i]);
        } else {
            ++newly;
        }
    }
    if (newly == 0) return out;
    const json marker{{"type", event_type::session_compacted},
                      {"at", now_iso8601()},
                      {"dropped", dropped + newly},
                      {"length", rest.size()},
                      {"digest", digest_of(rest)}};
    const std::string first = base::dump_json(marker) + "\n";
    if (first.size() + rest.size() >= text.size()) return out;
    if (!same_fold(fold(std::move(events)), fold(kept))) {
        return log_error{"compacting session log " + path.string() +
                         " would change what it folds to; it was left as it was"};
    }
    // The first line alone and on disk before the rest (the file's comment says why); the file
    // cut to its new length before the rest is written, so that no reader finds the old log's
    // tail past it as lines appended.
    if (!pwrite_all(fd, first, 0) || ::fdatasync(fd) != 0 ||
        ::ftruncate(fd, static_cast<off_t>(first.size() + rest.size())) != 0 ||
        !pwrite_all(fd, rest, first.size()) || ::fsync(fd) != 0) {
        return log_error{errno_text("cannot compact session log", path)};
    }
    out.rewritten = true;
    out.bytes_after = first.size() + rest.size();
    out.events_after = kept.size() + 1;
    out.dropped = newly;
    return out;
}

}  // namespace cordon::policy
