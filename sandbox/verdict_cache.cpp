// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/verdict_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/number.hpp"
#include "base/small_file.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/landlock_ruleset.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view format_line = "cordon-verdict 1";
constexpr std::size_t max_file_size = 64 * 1024;

// The whole of a small file, or "-" when it cannot be read (an absent sysctl is a fact too).
std::string small_file(const char* path) {
    base::read_result read = base::read_small_file(path, max_file_size);
    std::string* text = std::get_if<std::string>(&read);
    if (text == nullptr) return "-";
    while (!text->empty() && (text->back() == '\n' || text->back() == ' '))
        text->pop_back();
    return std::move(*text);
}

// `name`, and the device, inode, size, mtime and ctime of what `path` opens.
std::string identity(const std::string& name, const fs::path& path) {
    if (path.empty()) return "-";
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return name + " missing";
    return name + " " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + " " +
           std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ctim.tv_sec) + "." +
           std::to_string(st.st_ctim.tv_nsec);
}

std::string link_target(const char* link) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(link, ec);
    return ec ? "-" : target.string();
}

// The lines of /proc/self/status that decide what a runner may do.
std::string privileges() {
    const std::string status = small_file("/proc/self/status");
    std::string out;
    std::size_t start = 0;
    while (start < status.size()) {
        std::size_t end = status.find('\n', start);
        if (end == std::string::npos) end = status.size();
        const std::string_view line(status.data() + start, end - start);
        for (std::string_view field :
             {"CapEff:", "CapBnd:", "NoNewPrivs:", "Seccomp:", "Seccomp_filters:"}) {
            if (line.substr(0, field.size()) == field) {
                if (!out.empty()) out += ' ';
                for (char c : line)
                    out += c == '\t' ? ' ' : c;
            }
        }
        start = end + 1;
    }
    return out;
}

// A name no other writer uses at the same time: this process and thread, and the time.
std::string unique_suffix() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return std::to_string(::getpid()) + "." + std::to_string(::gettid()) + "." +
           std::to_string(now.tv_sec) + std::to_string(now.tv_nsec);
}

}  // namespace

fs::path default_verdict_cache() {
    return "/dev/shm/cordon-verdicts-" + std::to_string(::geteuid());
}

std::variant<std::string, unknown_facts> verdict_key(const fs::path& bwrap,
                                                     const fs::path& launcher) {
    // Facts every Linux process can read about itself: one missing means /proc is not there.
    for (const char* needed : {"/proc/sys/kernel/random/boot_id", "/proc/self/status"}) {
        const base::read_result read = base::read_small_file(needed, max_file_size);
        if (const auto* error = std::get_if<base::read_error>(&read)) {
            return unknown_facts{error->describe(needed)};
        }
    }
    for (const char* needed : {"/proc/self/ns/user", "/proc/self/ns/mnt", "/proc/self/exe"}) {
        std::error_code ec;
        (void)fs::read_symlink(needed, ec);
        if (ec) return unknown_facts{"cannot read " + std::string(needed) + ": " + ec.message()};
    }
    std::string key;
    const auto fact = [&key](std::string_view name, const std::string& value) {
        key += name;
        key += ' ';
        for (char c : value)
            key += c == '\n' ? ' ' : c;
        key += '\n';
    };
    fact("boot", small_file("/proc/sys/kernel/random/boot_id"));
    fact("euid", std::to_string(::geteuid()));
    fact("userns", link_target("/proc/self/ns/user"));
    fact("mntns", link_target("/proc/self/ns/mnt"));
    fact("privileges", privileges());
    for (const char* sysctl :
         {"/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces",
          "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "/proc/sys/vm/memfd_noexec"}) {
        fact(sysctl, small_file(sysctl));
    }
    fact("landlock", std::to_string(landlock::query_abi()));
    fact("lsm", small_file("/proc/self/attr/current"));
    fact("bwrap", identity(bwrap.string(), bwrap));
    fact("launcher", identity(launcher.string(), launcher));
    // The running image itself (the link opens it even when its file was replaced or deleted).
    fact("prober", identity(link_target("/proc/self/exe"), "/proc/self/exe"));
    return key;
}

std::string verdict_file_name(backend_choice choice, const fs::path& bwrap,
                              const fs::path& launcher) {
    // FNV-1a over the three paths, each ended by a NUL (no path holds one).
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (const std::string& part :
         {link_target("/proc/self/exe"), bwrap.string(), launcher.string()}) {
        for (const char c : part) {
            hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
        }
        hash *= 0x100000001b3ULL;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return "verdict-" + std::string(to_string(choice)) + "-" + hex;
}

std::variant<verdict_cache, std::string> verdict_cache::open(const fs::path& directory) {
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
        const int error = errno;
        return "cannot create " + directory.string() + ": " + std::strerror(error);
    }
    unique_fd fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        const int error = errno;
        return "cannot open " + directory.string() + ": " + std::strerror(error);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
        return directory.string() + " is not a private directory of uid " +
               std::to_string(::geteuid());
    }
    return verdict_cache(std::move(fd));
}

std::optional<std::string> verdict_cache::load(const std::string& name, const std::string& key,
                                               std::string* stale) const {
    const auto why = [stale](std::string text) {
        if (stale) *stale = std::move(text);
        return std::nullopt;
    };
    // O_NONBLOCK: a FIFO put at the name (by any process of this user: the directory is out of a
    // confined command's reach) is refused below as not a regular file, not waited on for a
    // writer; the size check keeps a huge file from being read.
    unique_fd fd(::openat(directory_.get(), name.c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) return why("none cached");
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & 077) != 0 || static_cast<std::size_t>(st.st_size) > max_file_size) {
        return why("the cached file is not this user's own");
    }
    base::read_result read = base::read_small_fd(fd.get(), max_file_size);
    if (!std::holds_alternative<std::string>(read)) return why("the cached file could not be read");
    const std::string& text = std::get<std::string>(read);
    // format line, key lines, an empty line, the body.
    if (text.rfind(std::string(format_line) + '\n', 0) != 0) return why("another format");
    const std::size_t key_start = format_line.size() + 1;
    const std::size_t key_end = text.find("\n\n", key_start);
    if (key_end == std::string::npos) return why("the cached file is truncated");
    const std::string_view stored(text.data() + key_start, key_end + 1 - key_start);
    if (stored != key) {
        // Name the first fact that changed.
        std::size_t a = 0;
        std::size_t b = 0;
        while (a < stored.size() && b < key.size()) {
            const std::size_t a_end = stored.find('\n', a);
            const std::size_t b_end = key.find('\n', b);
            const std::string_view old_line = stored.substr(a, a_end - a);
            const std::string_view new_line = std::string_view(key).substr(b, b_end - b);
            if (old_line != new_line) {
                return why(std::string(new_line.substr(0, new_line.find(' '))) + " changed");
            }
            a = a_end + 1;
            b = b_end + 1;
        }
        return why("the key changed");
    }
    return text.substr(key_end + 2);
}

bool verdict_cache::store(const std::string& name, const std::string& key,
                          const std::string& body) const {
    const std::string temporary = "." + name + "." + unique_suffix();
    unique_fd fd(::openat(directory_.get(), temporary.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return false;
    const std::string text = std::string(format_line) + '\n' + key + '\n' + body;
    std::size_t done = 0;
    bool written = true;
    while (done < text.size()) {
        const ssize_t put = ::write(fd.get(), text.data() + done, text.size() - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) {
            written = false;
            break;
        }
        done += static_cast<std::size_t>(put);
    }
    if (!written ||
        ::renameat(directory_.get(), temporary.c_str(), directory_.get(), name.c_str()) != 0) {
        (void)::unlinkat(directory_.get(), temporary.c_str(), 0);
        return false;
    }
    forget_unused(name);
    return true;
}

void verdict_cache::forget_unused(const std::string& kept) const {
    const int listing = ::openat(directory_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listing < 0) return;
    DIR* entries = ::fdopendir(listing);
    if (entries == nullptr) {
        ::close(listing);
        return;
    }
    const auto now = std::chrono::system_clock::now();
    const auto week_ago = now - std::chrono::hours(24 * 7);
    // A temporary (store()) is renamed within moments of its making: one a minute old was left
    // by a cordon killed while it wrote.
    const auto minute_ago = now - std::chrono::minutes(1);
    while (const dirent* entry = ::readdir(entries)) {
        const std::string_view name = entry->d_name;
        const bool temporary = name.starts_with(".verdict-");
        if ((!name.starts_with("verdict-") && !temporary) || name == kept) continue;
        struct stat st {};
        if (::fstatat(directory_.get(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        const auto written = std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec);
        if (S_ISREG(st.st_mode) && written < (temporary ? minute_ago : week_ago)) {
            (void)::unlinkat(directory_.get(), entry->d_name, 0);
        }
    }
    ::closedir(entries);
}

void verdict_cache::forget(const std::string& name) const {
    (void)::unlinkat(directory_.get(), name.c_str(), 0);
}

// ---- the verdict's text (cached_verdict) ------------------------------------------------------
//   probed <seconds since boot>
//   launcher <probed 0|1> <abi> <reason>
//   rung <kind> <state 0|1|2> <abi|-> <bind_fd 0|1> <reason>   (one per rung, ladder order)

namespace {

// A verdict that passed over a rung or found none usable may rest on a passing condition (a
// probe that timed out on a loaded host, user namespaces used up for a while): it is reused for
// this long only. One whose first rung is usable is reused until its key changes or a run proves
// a runner broken.
constexpr std::chrono::seconds degraded_verdict_lifetime{60};

std::string one_line(std::string text) {
    for (char& c : text) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return text;
}

// The next field of a verdict line, consumed with the one space after it; nullopt at the end.
// Lines are written with single spaces, and a line read any other way is no verdict.
std::optional<std::string_view> next_field(std::string_view& line) {
    if (line.empty()) return std::nullopt;
    const std::size_t space = std::min(line.find(' '), line.size());
    const std::string_view field = line.substr(0, space);
    line.remove_prefix(std::min(space + 1, line.size()));
    if (field.empty()) return std::nullopt;
    return field;
}

// The whole of `field` as a number.
template <class Number>
std::optional<Number> number(std::optional<std::string_view> field) {
    if (!field) return std::nullopt;
    return base::parse_number<Number>(*field);
}

}  // namespace

std::chrono::seconds since_boot() {
    timespec now{};
    ::clock_gettime(CLOCK_BOOTTIME, &now);
    return std::chrono::seconds(now.tv_sec);
}

std::string cached_verdict::to_text() const {
    std::string body = "probed " + std::to_string(probed_at.count()) + "\n";
    body += "launcher " + std::string(launcher.probed ? "1 " : "0 ") +
            std::to_string(launcher.abi) + " " + one_line(launcher.reason) + "\n";
    for (const rung_report& rung : rungs) {
        body += "rung " + std::string(to_string(rung.kind)) + " " +
                std::to_string(static_cast<int>(rung.state)) + " " +
                (rung.landlock_abi ? std::to_string(*rung.landlock_abi) : std::string("-")) +
                (rung.bind_fd ? " 1 " : " 0 ") + one_line(rung.reason) + "\n";
    }
    return body;
}

std::optional<cached_verdict> cached_verdict::parse(std::string_view text,
                                                    const std::vector<rung_report>& ladder) {
    cached_verdict out;
    out.rungs = ladder;
    std::size_t next = 0;
    bool probed_seen = false;
    bool launcher_seen = false;
    // No stream here: this runs on every confined run, and a stream's first use brings in its
    // number-parsing code page by page (docs/BENCHMARKS.md).
    while (!text.empty()) {
        const std::size_t end = std::min(text.find('\n'), text.size());
        std::string_view fields = text.substr(0, end);
        text.remove_prefix(std::min(end + 1, text.size()));
        const auto tag = next_field(fields);
        if (tag == "probed") {
            const auto seconds = number<long long>(next_field(fields));
            if (!seconds || *seconds < 0 || probed_seen || !fields.empty()) return std::nullopt;
            out.probed_at = std::chrono::seconds(*seconds);
            probed_seen = true;
        } else if (tag == "launcher") {
            const auto probed = number<int>(next_field(fields));
            const auto abi = number<int>(next_field(fields));
            if (!probed || !abi || (*probed != 0 && *probed != 1) || launcher_seen) {
                return std::nullopt;
            }
            out.launcher.probed = *probed == 1;
            out.launcher.abi = *abi;
            out.launcher.reason = std::string(fields);
            launcher_seen = true;
        } else if (tag == "rung") {
            const auto kind = next_field(fields);
            const auto state = number<int>(next_field(fields));
            const auto abi = next_field(fields);
            const auto bind_fd = number<int>(next_field(fields));
            if (!kind || !state || !abi || !bind_fd || next >= out.rungs.size() ||
                *kind != to_string(out.rungs[next].kind) || *state < 0 || *state > 2 ||
                (*bind_fd != 0 && *bind_fd != 1)) {
                return std::nullopt;
            }
            rung_report& rung = out.rungs[next++];
            rung.state = static_cast<rung_state>(*state);
            rung.landlock_abi.reset();
            if (*abi != "-") {
                const auto value = number<int>(abi);
                if (!value) return std::nullopt;
                rung.landlock_abi = *value;
            }
            rung.bind_fd = *bind_fd == 1;
            rung.reason = std::string(fields);
            rung.level =
                rung.state == rung_state::usable
                    ? assess(rung.kind, sandbox_mode::read_only, rung.landlock_abi.value_or(0))
                          .level
                    : enforcement::full;
        } else {
            return std::nullopt;
        }
    }
    if (!probed_seen || !launcher_seen || next != out.rungs.size()) return std::nullopt;
    return out;
}

std::optional<std::size_t> cached_verdict::first_usable() const {
    for (std::size_t i = 0; i < rungs.size(); ++i) {
        if (rungs[i].state == rung_state::usable) return i;
    }
    return std::nullopt;
}

bool cached_verdict::current(std::chrono::seconds now) const {
    if (probed_at > now) return false;  // another boot's, or a clock gone back
    return first_usable() == std::size_t{0} || now - probed_at <= degraded_verdict_lifetime;
}

std::string verdict_difference(const std::vector<rung_report>& before,
                               const std::vector<rung_report>& now) {
    for (std::size_t i = 0; i < before.size() && i < now.size(); ++i) {
        const rung_report& a = before[i];
        const rung_report& b = now[i];
        if (a.state == rung_state::not_probed || b.state == rung_state::not_probed) continue;
        if (a.state != b.state || a.landlock_abi != b.landlock_abi || a.bind_fd != b.bind_fd) {
            return std::string(to_string(a.kind)) + " was " + std::string(to_string(a.state)) +
                   ", is " + std::string(to_string(b.state)) +
                   (b.reason.empty() ? "" : " (" + b.reason + ")");
        }
    }
    return {};
}

}  // namespace cordon::sandbox
