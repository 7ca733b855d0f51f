// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/session_log.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <random>

#include "base/enum_text.hpp"
#include "base/json_text.hpp"
#include "cordon/policy.hpp"
#include "cordon/unique_fd.hpp"
#include "policy/session_log_io.hpp"
#include "sandbox/write_all.hpp"

namespace cordon::policy {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr auto approval_policy_texts = base::enum_texts<approval_policy>({
    {approval_policy::ask, "ask"},
    {approval_policy::never, "never"},
});

std::string_view to_string(approval_policy policy) noexcept {
    return approval_policy_texts.text(policy);
}

constexpr auto approval_outcome_texts = base::enum_texts<approval_outcome>({
    {approval_outcome::allowed_once, "allowed-once"},
    {approval_outcome::allowed_for_session, "allowed-for-session"},
    {approval_outcome::rejected, "rejected"},
    {approval_outcome::cancelled, "cancelled"},
    {approval_outcome::unavailable, "unavailable"},
});

std::string_view to_string(approval_outcome outcome) noexcept {
    return approval_outcome_texts.text(outcome);
}

std::optional<approval_policy> parse_approval_policy(std::string_view text) noexcept {
    return approval_policy_texts.parse(text);
}

std::optional<approval_outcome> parse_approval_outcome(std::string_view text) noexcept {
    return approval_outcome_texts.parse(text);
}

namespace detail {

std::string errno_text(std::string_view what, const fs::path& path) {
    return std::string(what) + " " + path.string() + ": " + std::strerror(errno);
}

std::string now_iso8601() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[40];
    const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(millis));
    return text;
}

}  // namespace detail

namespace {

using detail::errno_text;

// Whoever can write the log can widen every later run: only a regular file of our own that
// nobody else may write is trusted.
std::optional<log_error> untrusted(int fd, const fs::path& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return log_error{errno_text("cannot inspect", path)};
    if (!S_ISREG(st.st_mode)) {
        return log_error{"session log " + path.string() + " is not a regular file"};
    }
    if (st.st_uid != ::geteuid()) {
        return log_error{"session log " + path.string() + " is owned by uid " +
                         std::to_string(st.st_uid) + ", not by this user"};
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return log_error{"session log " + path.string() +
                         " is writable by group or others; chmod 600 it"};
    }
    return std::nullopt;
}

}  // namespace

namespace detail {

// The log's flock, taken without blocking and tried again until `wait` is over: held for longer,
// it is held by something that is not an append (appends hold it for one write and one fsync),
// and the append fails with a line that says so.
std::optional<log_error> lock_for_append(int fd, const fs::path& path,
                                         std::chrono::milliseconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return std::nullopt;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            return log_error{errno_text("cannot lock session log", path)};
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return log_error{"session log " + path.string() +
                             " is locked by another process (its flock was held for over " +
                             std::to_string(wait.count()) + " ms); nothing was appended"};
        }
        ::poll(nullptr, 0, lock_poll_ms);
    }
}

std::variant<unique_fd, log_error> open_log(const fs::path& path, int flags) {
    // O_NONBLOCK: a FIFO in the log's place is refused below, not waited on for a writer.
    unique_fd fd(::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK));
    if (!fd) {
        if (errno == ELOOP) {
            return log_error{"session log " + path.string() +
                             " is a symbolic link; give the file itself"};
        }
        return log_error{errno_text("cannot open session log", path)};
    }
    if (auto refused = untrusted(fd.get(), path)) return *refused;
    return fd;
}

}  // namespace detail

namespace {

bool is_string(const json& event, const char* field, bool required = true) {
    const auto found = event.find(field);
    if (found == event.end()) return !required;
    return found->is_string();
}

std::optional<std::string> bad_mode(const json& event, const char* field, bool required = true) {
    const auto found = event.find(field);
    if (found == event.end()) {
        if (!required) return std::nullopt;
        return std::string("no \"") + field + "\"";
    }
    if (!found->is_string() || !sandbox::parse_sandbox_mode(found->get<std::string>())) {
        return std::string("\"") + field + "\" " + base::dump_json(*found) +
               " is not a sandbox mode";
    }
    return std::nullopt;
}

std::optional<std::string> bad_grant(const json& grant) {
    if (!grant.is_object()) return "\"grant\" is not an object";
    const auto prefix = grant.find("prefix");
    if (prefix == grant.end() || !prefix->is_array() || prefix->empty()) {
        return "the grant has no \"prefix\"";
    }
    // A word may be empty: `''` is an argument like any other (`git commit -m ''`), and the
    // grant of an empty command is that exact, empty text.
    for (const auto& word : *prefix) {
        if (!word.is_string()) return "the grant's prefix holds something that is not a word";
    }
    if (const auto id = grant.find("id"); id != grant.end() && !id->is_string()) {
        return "the grant's \"id\" is not a string";
    }
    if (const auto exact = grant.find("exact"); exact != grant.end() && !exact->is_boolean()) {
        return "the grant's \"exact\" is not a boolean";
    }
    if (const auto workdir = grant.find("workdir");
        workdir != grant.end() && !workdir->is_string()) {
        return "the grant's \"workdir\" is not a string";
    }
    if (auto bad = invalid_network_fields(grant, "network", "domains")) return bad;
    return bad_mode(grant, "mode");
}

}  // namespace

std::optional<std::string> invalid_event(const json& event) {
    if (!event.is_object()) return "not a JSON object";
    const auto type = event.find("type");
    if (type == event.end() || !type->is_string()) return "no \"type\"";
    if (!is_string(event, "at", false)) return "\"at\" is not a string";
    const std::string kind = type->get<std::string>();
    if (kind == event_type::session_start) {
        if (!is_string(event, "cwd") || !fs::path(event["cwd"].get<std::string>()).is_absolute()) {
            return "session/start has no absolute \"cwd\"";
        }
        return std::nullopt;
    }
    if (kind == event_type::sandbox_mode) return bad_mode(event, "mode");
    if (kind == event_type::approval_policy) {
        if (!is_string(event, "policy") ||
            !parse_approval_policy(event["policy"].get<std::string>())) {
            return "\"policy\" " + base::dump_json(event.value("policy", json())) +
                   " is not an approval policy";
        }
        return std::nullopt;
    }
    if (kind == event_type::permission_preset) {
        if (!is_string(event, "preset") || event["preset"].get<std::string>().empty()) {
            return "permission/preset has no \"preset\"";
        }
        return std::nullopt;
    }
    if (kind == event_type::approval_asked) {
        if (!is_string(event, "id") || event["id"].get<std::string>().empty()) {
            return "approval/asked has no \"id\"";
        }
        if (auto bad = bad_mode(event, "mode")) return bad;
        if (auto bad = bad_mode(event, "from", false)) return bad;
        if (auto bad = invalid_network_fields(event, "network", "domains")) return bad;
        if (auto bad = invalid_network_fields(event, "network_from", "domains_from")) return bad;
        if (const auto env = event.find("env"); env != event.end()) {
            if (!env->is_array() || !std::all_of(env->begin(), env->end(),
                                                 [](const json& e) { return e.is_string(); })) {
                return std::string("approval/asked has an \"env\" that is not a list of strings");
            }
        }
        if (event.contains("input") && !is_string(event, "input")) {
            return std::string("approval/asked has an \"input\" that is not a string");
        }
        return std::nullopt;
    }
    if (kind == event_type::approval_decided) {
        if (!is_string(event, "id") || event["id"].get<std::string>().empty()) {
            return "approval/decided has no \"id\"";
        }
        if (!is_string(event, "outcome")) return "approval/decided has no \"outcome\"";
        const auto outcome = parse_approval_outcome(event["outcome"].get<std::string>());
        if (!outcome)
            return "\"outcome\" " + base::dump_json(event["outcome"]) + " is not an outcome";
        if (*outcome == approval_outcome::allowed_for_session) {
            const auto grant = event.find("grant");
            if (grant == event.end()) return "allowed-for-session without a \"grant\"";
            return bad_grant(*grant);
        }
        return std::nullopt;
    }
    if (kind == event_type::session_compacted) {
        for (const char* field : {"dropped", "length"}) {
            const auto found = event.find(field);
            if (found == event.end() || !found->is_number_unsigned()) {
                return std::string("session/compacted has no \"") + field + "\" count";
            }
        }
        const auto digest = event.find("digest");
        if (digest == event.end() || !digest->is_string() ||
            digest->get<std::string>().size() != 16 ||
            digest->get<std::string>().find_first_not_of("0123456789abcdef") != std::string::npos) {
            return std::string("session/compacted has no \"digest\" of 16 hex digits");
        }
        return std::nullopt;
    }
    if (kind == event_type::approval_revoked) {
        if (!is_string(event, "grant") || event["grant"].get<std::string>().empty()) {
            return "approval/revoked has no \"grant\"";
        }
        return std::nullopt;
    }
    return "unknown event type \"" + kind + "\"";
}

std::variant<session_event, log_error> detail::parse_line(std::string_view line,
                                                          std::size_t number) {
    if (line.empty()) return log_error{"an empty line", number};
    json body = json::parse(line, nullptr, false);
    if (body.is_discarded()) return log_error{"not valid JSON", number};
    // The bytes append() escaped (base/json_text.hpp): a grant for a command that is not
    // UTF-8 matches that very command again.
    base::unescape_json_strings(body);
    if (auto bad = invalid_event(body)) return log_error{*bad, number};
    std::string type = body["type"].get<std::string>();
    return session_event{std::move(type), std::move(body), number};
}

void detail::fold_event(session_state& state, const session_event& event) {
    const json& body = event.body;
    if (event.type == event_type::session_start) {
        state.cwd = fs::path(body["cwd"].get<std::string>());
    } else if (event.type == event_type::sandbox_mode) {
        state.mode = sandbox::parse_sandbox_mode(body["mode"].get<std::string>());
    } else if (event.type == event_type::approval_policy) {
        state.approval = parse_approval_policy(body["policy"].get<std::string>());
    } else if (event.type == event_type::permission_preset) {
        state.preset = body["preset"].get<std::string>();
    } else if (event.type == event_type::approval_decided) {
        if (parse_approval_outcome(body["outcome"].get<std::string>()) !=
            approval_outcome::allowed_for_session) {
            return;
        }
        const json& grant = body["grant"];
        session_grant granted;
        granted.id = body["id"].get<std::string>();
        // A decision that an earlier grant covered names that grant: a use, not a new one
        // (and never one that brings back a grant revoked meanwhile).
        if (grant.value("id", granted.id) != granted.id) return;
        for (const auto& word : grant["prefix"])
            granted.prefix.push_back(word.get<std::string>());
        granted.exact = grant.value("exact", false);
        granted.workdir = grant.value("workdir", std::string());
        if (const auto environment = grant.find("environment"); environment != grant.end()) {
            granted.environment = environment->get<std::vector<std::string>>();
        }
        granted.mode = *sandbox::parse_sandbox_mode(grant["mode"].get<std::string>());
        granted.network = network_from_json(grant, "network", "domains");
        state.grants.push_back(std::move(granted));
    } else if (event.type == event_type::approval_revoked) {
        const std::string id = body["grant"].get<std::string>();
        std::erase_if(state.grants, [&id](const session_grant& grant) { return grant.id == id; });
    }
    // session/compacted is about the file, not the session: it folds to nothing.
}

session_state fold(std::vector<session_event> events) {
    session_state state;
    for (const auto& event : events)
        detail::fold_event(state, event);
    state.events = std::move(events);
    return state;
}

session_log::session_log(fs::path path)
    : path_(std::move(path)), journal_(std::make_shared<journal>()) {}

std::variant<session_log, log_error> session_log::open_or_create(const fs::path& path,
                                                                 const fs::path& cwd) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    if (ec) return log_error{"cannot use session log " + path.string() + ": " + ec.message()};
    if (!cwd.is_absolute()) return log_error{"a session's working directory must be absolute"};
    // Created whole or not at all: the first event is written to a private file that is then
    // linked into place, so that no reader ever sees a session without its working directory,
    // and of two processes creating the same session, one wins and the other opens it.
    for (int attempt = 0; attempt < 8; ++attempt) {
        {
            unique_fd there(::open(absolute.c_str(),
                                   O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK));
            if (there || errno != ENOENT) return open_existing(absolute);
        }
        std::random_device random;
        const fs::path temporary =
            absolute.parent_path() / ("." + absolute.filename().string() + ".new-" +
                                      std::to_string(::getpid()) + "-" + std::to_string(random()));
        unique_fd fd(
            ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (!fd) return log_error{errno_text("cannot create session log", absolute)};
        json start{{"type", event_type::session_start},
                   {"at", detail::now_iso8601()},
                   {"cwd", sandbox::canonical_path(cwd).string()}};
        const std::string line = base::dump_json(start) + "\n";
        const bool written = write_all(fd.get(), line) && ::fsync(fd.get()) == 0;
        const int linked = written ? ::link(temporary.c_str(), absolute.c_str()) : -1;
        const int error = errno;
        ::unlink(temporary.c_str());
        if (!written) {
            errno = error;
            return log_error{errno_text("cannot write session log", absolute)};
        }
        if (linked != 0 && error != EEXIST) {
            errno = error;
            return log_error{errno_text("cannot create session log", absolute)};
        }
        if (linked == 0) {
            unique_fd dir(
                ::open(absolute.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            if (dir) ::fsync(dir.get());
        }
        // Ours, or another process's that won the race: open it as any existing log.
    }
    return log_error{"cannot create session log " + absolute.string() +
                     ": it keeps appearing and disappearing"};
}

std::variant<session_log, log_error> session_log::open_existing(const fs::path& path) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    if (ec) return log_error{"cannot use session log " + path.string() + ": " + ec.message()};
    auto fd = detail::open_log(absolute, O_RDONLY);
    if (auto* error = std::get_if<log_error>(&fd)) return *error;
    return session_log(absolute);
}

std::optional<log_error> session_log::append(json event) const {
    if (!event.is_object() || !event.contains("type") || !event["type"].is_string()) {
        return log_error{"an event needs a string \"type\""};
    }
    event["at"] = detail::now_iso8601();
    if (event["type"] == event_type::session_compacted) {
        return log_error{"refusing to log an event: session/compacted is written by compact()"};
    }
    if (auto bad = invalid_event(event)) return log_error{"refusing to log an event: " + *bad};
    auto opened = detail::open_log(path_, O_RDWR | O_APPEND);
    if (auto* error = std::get_if<log_error>(&opened)) return *error;
    const unique_fd& fd = std::get<unique_fd>(opened);
    // One writer at a time: with O_APPEND every write lands at the end, and the lock keeps the
    // line whole even if write() returns short. Never waited on without a bound: any process
    // that can open the log for reading can take its flock (a confined command under
    // read-only, a background job), and an append that waited for it would hold the call that
    // appends for the holder's whole lifetime.
    if (auto refused = detail::lock_for_append(fd.get(), path_, lock_wait_)) return *refused;
    std::string line = base::dump_json(event) + "\n";
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return log_error{errno_text("cannot inspect", path_)};
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size + line.size() + 1 > max_bytes_) {
        // Over the bound: compacted first (the fold stays what it was), refused if that leaves
        // no room. pwrite(2) on an O_APPEND description appends wherever it is asked to write.
        const int flags = ::fcntl(fd.get(), F_GETFL);
        if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_APPEND) != 0) {
            return log_error{errno_text("cannot compact session log", path_)};
        }
        auto compacted = detail::compact_locked(fd.get(), path_, max_bytes_, journal_->read);
        if (::fcntl(fd.get(), F_SETFL, flags) != 0) {
            return log_error{errno_text("cannot compact session log", path_)};
        }
        if (auto* error = std::get_if<log_error>(&compacted)) return *error;
        const std::uint64_t after = std::get<compaction>(compacted).bytes_after;
        if (after + line.size() + 1 > max_bytes_) {
            return log_error{"session log " + path_.string() + " would grow to " +
                             std::to_string(after + line.size()) + " bytes, over its bound of " +
                             std::to_string(max_bytes_) +
                             " even compacted (its live grants, open questions and this event); "
                             "nothing was appended"};
        }
        st.st_size = static_cast<off_t>(after);
    }
    if (st.st_size > 0) {
        char last = '\n';
        if (::pread(fd.get(), &last, 1, st.st_size - 1) != 1) {
            return log_error{errno_text("cannot read session log", path_)};
        }
        journal_->read += 1;
        // A line torn by a crash stays torn (read() reports it) and is never glued to ours.
        if (last != '\n') line.insert(0, "\n");
    }
    if (!write_all(fd.get(), line)) return log_error{errno_text("cannot write session log", path_)};
    if (::fsync(fd.get()) != 0) return log_error{errno_text("cannot sync session log", path_)};
    return std::nullopt;
}

std::variant<session_state, log_error> session_log::state() const {
    auto events = read();
    if (auto* error = std::get_if<log_error>(&events)) return *error;
    return fold(std::move(std::get<std::vector<session_event>>(events)));
}

std::uint64_t session_log::bytes_read() const noexcept {
    return journal_->read.load();
}

}  // namespace cordon::policy
