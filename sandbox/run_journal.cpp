// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/run_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "base/random_name.hpp"
#include "cordon/policy.hpp"
#include "sandbox/directory_listing.hpp"
#include "sandbox/quarantine.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view magic = "cordon-judgement-3";
constexpr std::string_view previous_magic = "cordon-judgement-2";
// The copies are at most kept_copies::total_limit bytes of content; the rest is names.
constexpr std::size_t record_limit = std::size_t{32} << 20;
constexpr std::string_view record_prefix = "window-";
constexpr std::string_view unfinished_prefix = ".new-window-";

// The journal's directory, made when `make` and missing; refused unless it is this user's own
// and nobody else's to write.
unique_fd open_journal(const fs::path& directory, bool make) {
    if (make && ::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) return {};
    unique_fd dir = open_directory_no_symlinks(directory);
    struct stat st {};
    if (!dir || ::fstat(dir.get(), &st) != 0) return {};
    if (st.st_uid != ::geteuid() || (st.st_mode & 0077) != 0) {
        errno = EPERM;
        return {};
    }
    return dir;
}

template <typename Number>
bool parse_number(std::string_view text, Number& out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
}

bool write_fully(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t wrote = ::write(fd, data.data(), data.size());
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) {
            if (wrote == 0) errno = ENOSPC;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(wrote));
    }
    return true;
}

// The whole of the file open as `fd`, from its start; nullopt when it is larger than a record.
std::optional<std::string> read_record(int fd) {
    std::string text;
    char buffer[65536];
    for (off_t at = 0;;) {
        const ssize_t got = ::pread(fd, buffer, sizeof buffer, at);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return std::nullopt;
        if (got == 0) return text;
        text.append(buffer, static_cast<std::size_t>(got));
        at += got;
        if (text.size() > record_limit) return std::nullopt;
    }
}

// The names in the journal that start with `prefix`.
std::vector<std::string> entries(int dir, std::string_view prefix) {
    std::vector<std::string> out;
    for (std::string& name : names_in(dir).value_or(std::vector<std::string>{})) {
        if (name.starts_with(prefix)) out.push_back(std::move(name));
    }
    return out;
}

// Renames `from` to `to` in `dir` unless `to` exists. Where the file system has no
// RENAME_NOREPLACE (NFS, 9p), a link, which fails on a name taken, then the old name's removal:
// both names exist only while the writer holds the copies' lock, under which every claim is made.
bool put_in_place(int dir, const std::string& from, const std::string& to) {
    if (::renameat2(dir, from.c_str(), dir, to.c_str(), RENAME_NOREPLACE) == 0) return true;
    if (errno != EINVAL && errno != ENOSYS) return false;
    if (::linkat(dir, from.c_str(), dir, to.c_str(), 0) != 0) return false;
    ::unlinkat(dir, from.c_str(), 0);
    return true;
}

}  // namespace

fs::path default_journal_directory() {
    return "/dev/shm/cordon-judgements-" + std::to_string(::geteuid());
}

void append_field(std::string& out, std::string_view tag, std::string_view value) {
    out += tag;
    out += '\0';
    out += std::to_string(value.size());
    out += '\0';
    out += value;
    out += '\0';
}

std::optional<std::vector<std::pair<std::string_view, std::string_view>>> split_fields(
    std::string_view text) {
    std::vector<std::pair<std::string_view, std::string_view>> out;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t tag_end = text.find('\0', at);
        if (tag_end == std::string_view::npos) return std::nullopt;
        const std::size_t size_end = text.find('\0', tag_end + 1);
        std::size_t size = 0;
        if (size_end == std::string_view::npos ||
            !parse_number(text.substr(tag_end + 1, size_end - tag_end - 1), size) ||
            size >= text.size() - size_end - 1 || text[size_end + 1 + size] != '\0') {
            return std::nullopt;
        }
        out.emplace_back(text.substr(at, tag_end - at), text.substr(size_end + 1, size));
        at = size_end + 1 + size + 1;
    }
    return out;
}

std::string window_text(const judgement_scope& window, std::string_view copies) {
    std::string out;
    append_field(out, "format", magic);
    append_field(out, "since",
                 std::to_string(window.since.tv_sec) + "." + std::to_string(window.since.tv_nsec));
    for (const fs::path& root : window.roots)
        append_field(out, "root", root.native());
    for (const std::string& name : window.names)
        append_field(out, "name", name);
    for (const fs::path& kept : window.kept)
        append_field(out, "kept", kept.native());
    for (const fs::path& hooks : window.hook_directories)
        append_field(out, "hooks", hooks.native());
    for (const fs::path& file : window.configurations)
        append_field(out, "config", file.native());
    for (const protected_place& place : window.places) {
        append_field(out, "place-name", place.name);  // the name, then its place
        append_field(out, "place", place.path.native());
    }
    if (!copies.empty()) append_field(out, "copies", copies);
    return out;
}

std::optional<window_record> parse_window(std::string_view text) {
    if (text.size() > record_limit) return std::nullopt;
    const auto fields = split_fields(text);
    if (!fields || fields->empty() ||
        (fields->front() != std::pair(std::string_view("format"), magic) &&
         // A record a cordon of the format before left (no places) is judged all the same.
         fields->front() != std::pair(std::string_view("format"), previous_magic))) {
        return std::nullopt;
    }
    window_record out;
    judgement_scope& window = out.window;
    bool since = false;
    bool copies = false;
    std::optional<std::string> place_name;  // waiting for its place
    for (std::size_t i = 1; i < fields->size(); ++i) {
        const auto [tag, value] = (*fields)[i];
        if (tag == "since") {
            const std::size_t dot = value.find('.');
            long long seconds = 0;
            long long nanoseconds = 0;
            if (since || dot == std::string_view::npos ||
                !parse_number(value.substr(0, dot), seconds) ||
                !parse_number(value.substr(dot + 1), nanoseconds) || nanoseconds < 0 ||
                nanoseconds >= 1'000'000'000) {
                return std::nullopt;
            }
            window.since = {static_cast<time_t>(seconds), static_cast<long>(nanoseconds)};
            since = true;
            continue;
        }
        if (tag == "name" || tag == "place-name") {
            if (bad_protected_name(value) || place_name) return std::nullopt;
            if (tag == "name") {
                window.names.emplace_back(value);
            } else {
                place_name = std::string(value);
            }
            continue;
        }
        if (tag == "copies") {
            if (copies) return std::nullopt;
            out.copies = std::string(value);
            copies = true;
            continue;
        }
        if (tag == "attempt") {
            ++out.attempts;
            continue;
        }
        if (value.find('\0') != std::string_view::npos) return std::nullopt;
        const fs::path path{std::string(value)};
        if (!path.is_absolute() || path.lexically_normal() != path) return std::nullopt;
        if (tag == "root") {
            window.roots.push_back(path);
        } else if (tag == "kept") {
            window.kept.push_back(path);
        } else if (tag == "hooks") {
            window.hook_directories.push_back(path);
        } else if (tag == "config") {
            window.configurations.push_back(path);
        } else if (tag == "place" && place_name) {
            window.places.push_back({path, std::move(*place_name)});
            place_name.reset();
        } else {
            return std::nullopt;
        }
        if (place_name) return std::nullopt;  // a name without its place
    }
    if (!since || window.roots.empty() || place_name) return std::nullopt;
    return out;
}

std::variant<std::unique_ptr<owed_judgement>, std::string> owed_judgement::record(
    const fs::path& directory, const judgement_scope& window, std::string_view copies) {
    unique_fd dir = open_journal(directory, true);
    if (!dir) return "cannot use " + directory.string() + ": " + std::strerror(errno);
    // Unique among the records of every cordon, a dead one's too (a later cordon may have its
    // pid), and put in place only where no record is: never over another cordon's.
    static std::atomic<unsigned> counter{0};
    const std::string name = std::string(record_prefix) + std::to_string(::getpid()) + "-" +
                             std::to_string(++counter) + "-" + base::random_hex64();
    const std::string unfinished =
        std::string(unfinished_prefix) + name.substr(record_prefix.size());
    unique_fd file(::openat(dir.get(), unfinished.c_str(),
                            O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!file) {
        return "cannot record the window in " + directory.string() + ": " + std::strerror(errno);
    }
    // Locked before it is written, and put in place whole: a record under its own name is
    // complete, and one whose lock is free is a dead cordon's.
    const auto failed = [&](const std::string& what) {
        const int error = errno;
        ::unlinkat(dir.get(), unfinished.c_str(), 0);
        return what + ": " + std::strerror(error);
    };
    if (::flock(file.get(), LOCK_EX | LOCK_NB) != 0)
        return failed("cannot lock the window's record");
    if (!write_fully(file.get(), window_text(window, copies)))
        return failed("cannot record the window");
    if (!put_in_place(dir.get(), unfinished, name)) return failed("cannot record the window");
    return std::unique_ptr<owed_judgement>(
        new owed_judgement(directory / name, std::move(file), window, 0));
}

std::vector<std::unique_ptr<owed_judgement>> owed_judgement::claim_abandoned(
    const fs::path& directory) {
    std::vector<std::unique_ptr<owed_judgement>> out;
    unique_fd dir = open_journal(directory, false);
    if (!dir) return out;
    // Claimed under the copies' lock (hold_copies), under which every record is written and the
    // live windows are read. A record is made a moment before its writer locks it, and a
    // reader's test of a dead record's lock holds that lock for a moment: neither is then taken
    // for what it is not (a live window removed, owed by nobody and seen by no run that starts
    // while it lasts; a dead one left unjudged).
    if (entries(dir.get(), record_prefix).empty() && entries(dir.get(), unfinished_prefix).empty())
        return out;
    const unique_fd holding = hold_copies(directory);
    // A record a cordon died writing holds nothing it owes: its command never started. Without
    // the copies' lock, none is removed.
    if (holding) {
        for (const std::string& name : entries(dir.get(), unfinished_prefix)) {
            unique_fd file(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
            if (file && ::flock(file.get(), LOCK_EX | LOCK_NB) == 0)
                ::unlinkat(dir.get(), name.c_str(), 0);
        }
    }
    for (const std::string& name : entries(dir.get(), record_prefix)) {
        unique_fd file(::openat(dir.get(), name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
        if (!file) continue;
        if (::flock(file.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its cordon lives
        struct stat st {};
        // Judged and removed by its cordon between the listing and the lock.
        if (::fstat(file.get(), &st) != 0 || st.st_nlink == 0 || !S_ISREG(st.st_mode)) continue;
        const auto text = read_record(file.get());
        auto record = text ? parse_window(*text) : std::nullopt;
        if (!record) {
            // Unreadable: nothing to judge by. Removed, so that it is not read again.
            ::unlinkat(dir.get(), name.c_str(), 0);
            continue;
        }
        // Counted before the judgement: a judgement that kills its cordon is seen by the next.
        std::string attempt;
        append_field(attempt, "attempt", "");
        if (::lseek(file.get(), 0, SEEK_END) < 0 || !write_fully(file.get(), attempt)) continue;
        out.push_back(std::unique_ptr<owed_judgement>(new owed_judgement(
            directory / name, std::move(file), std::move(record->window), record->attempts + 1)));
    }
    return out;
}

std::vector<window_record> owed_judgement::live_windows(const fs::path& directory) {
    std::vector<window_record> out;
    unique_fd dir = open_journal(directory, false);
    if (!dir) return out;
    for (const std::string& name : entries(dir.get(), record_prefix)) {
        unique_fd file(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (!file) continue;
        if (::flock(file.get(), LOCK_SH | LOCK_NB) == 0) continue;  // its cordon is gone
        const auto text = read_record(file.get());
        if (auto record = text ? parse_window(*text) : std::nullopt) {
            out.push_back(std::move(*record));
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const window_record& a, const window_record& b) {
        const timespec& x = a.window.since;
        const timespec& y = b.window.since;
        return x.tv_sec < y.tv_sec || (x.tv_sec == y.tv_sec && x.tv_nsec < y.tv_nsec);
    });
    return out;
}

unique_fd owed_judgement::hold_copies(const fs::path& directory) {
    unique_fd dir = open_journal(directory, true);
    if (!dir) return {};
    unique_fd lock(
        ::openat(dir.get(), "copies.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!lock) return {};
    while (::flock(lock.get(), LOCK_EX) != 0) {
        if (errno != EINTR) return {};
    }
    return lock;
}

owed_judgement::~owed_judgement() {
    // Removed while still locked: a cordon that finds it meanwhile sees no link and leaves it.
    ::unlink(file_.c_str());
}

}  // namespace cordon::sandbox
