#include "sandbox/run_journal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "cordon/policy.hpp"
#include "sandbox/quarantine.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view magic = "cordon-judgement-1";
constexpr std::size_t record_limit = std::size_t{4} << 20;

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

bool parse_number(std::string_view text, long long& out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

fs::path default_journal_directory() {
    return "/dev/shm/cordon-judgements-" + std::to_string(::geteuid());
}

std::string window_text(const judgement_scope& window) {
    std::string out(magic);
    out += '\0';
    const auto field = [&out](std::string_view tag, std::string_view value) {
        out += tag;
        out += '\0';
        out += value;
        out += '\0';
    };
    field("since",
          std::to_string(window.since.tv_sec) + "." + std::to_string(window.since.tv_nsec));
    for (const fs::path& root : window.roots)
        field("root", root.native());
    for (const std::string& name : window.names)
        field("name", name);
    for (const fs::path& kept : window.kept)
        field("kept", kept.native());
    for (const fs::path& hooks : window.hook_directories)
        field("hooks", hooks.native());
    for (const fs::path& file : window.configurations)
        field("config", file.native());
    return out;
}

std::optional<judgement_scope> parse_window(std::string_view text) {
    if (text.size() > record_limit || !text.ends_with('\0')) return std::nullopt;
    std::vector<std::string_view> fields;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = text.find('\0', at);
        fields.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    if (fields.empty() || fields.front() != magic || fields.size() % 2 != 1) return std::nullopt;
    judgement_scope out;
    bool since = false;
    for (std::size_t i = 1; i + 1 < fields.size(); i += 2) {
        const std::string_view tag = fields[i];
        const std::string_view value = fields[i + 1];
        if (tag == "since") {
            const std::size_t dot = value.find('.');
            long long seconds = 0;
            long long nanoseconds = 0;
            if (dot == std::string_view::npos || !parse_number(value.substr(0, dot), seconds) ||
                !parse_number(value.substr(dot + 1), nanoseconds) || nanoseconds < 0 ||
                nanoseconds >= 1'000'000'000) {
                return std::nullopt;
            }
            out.since = {static_cast<time_t>(seconds), static_cast<long>(nanoseconds)};
            since = true;
            continue;
        }
        if (tag == "name") {
            if (bad_protected_name(value)) return std::nullopt;
            out.names.emplace_back(value);
            continue;
        }
        const fs::path path{std::string(value)};
        if (!path.is_absolute() || path.lexically_normal() != path) return std::nullopt;
        if (tag == "root") {
            out.roots.push_back(path);
        } else if (tag == "kept") {
            out.kept.push_back(path);
        } else if (tag == "hooks") {
            out.hook_directories.push_back(path);
        } else if (tag == "config") {
            out.configurations.push_back(path);
        } else {
            return std::nullopt;
        }
    }
    if (!since || out.roots.empty()) return std::nullopt;
    return out;
}

std::variant<std::unique_ptr<owed_judgement>, std::string> owed_judgement::record(
    const fs::path& directory, const judgement_scope& window) {
    unique_fd dir = open_journal(directory, true);
    if (!dir) return "cannot use " + directory.string() + ": " + std::strerror(errno);
    static std::atomic<unsigned> counter{0};
    const std::string name =
        "window-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
    unique_fd file(::openat(dir.get(), name.c_str(),
                            O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!file)
        return "cannot record the window in " + directory.string() + ": " + std::strerror(errno);
    // Locked before it holds anything: a half-written record is never an abandoned one.
    if (::flock(file.get(), LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::unlinkat(dir.get(), name.c_str(), 0);
        return std::string("cannot lock the window's record: ") + std::strerror(error);
    }
    const std::string text = window_text(window);
    std::string_view left = text;
    while (!left.empty()) {
        const ssize_t wrote = ::write(file.get(), left.data(), left.size());
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) {
            const int error = wrote < 0 ? errno : ENOSPC;
            ::unlinkat(dir.get(), name.c_str(), 0);
            return std::string("cannot record the window: ") + std::strerror(error);
        }
        left.remove_prefix(static_cast<std::size_t>(wrote));
    }
    return std::unique_ptr<owed_judgement>(
        new owed_judgement(directory / name, std::move(file), window));
}

std::vector<std::unique_ptr<owed_judgement>> owed_judgement::claim_abandoned(
    const fs::path& directory) {
    std::vector<std::unique_ptr<owed_judgement>> out;
    unique_fd dir = open_journal(directory, false);
    if (!dir) return out;
    const int listed = ::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listed < 0) return out;
    DIR* stream = ::fdopendir(listed);
    if (stream == nullptr) {
        ::close(listed);
        return out;
    }
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(stream)) {
        if (std::string_view(entry->d_name).starts_with("window-"))
            names.emplace_back(entry->d_name);
    }
    ::closedir(stream);
    for (const std::string& name : names) {
        unique_fd file(::openat(dir.get(), name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
        if (!file) continue;
        if (::flock(file.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its cordon lives
        struct stat st {};
        // Judged and removed by its cordon between the listing and the lock.
        if (::fstat(file.get(), &st) != 0 || st.st_nlink == 0 || !S_ISREG(st.st_mode)) continue;
        std::string text;
        char buffer[65536];
        for (;;) {
            const ssize_t got = ::read(file.get(), buffer, sizeof buffer);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;
            text.append(buffer, static_cast<std::size_t>(got));
            if (text.size() > record_limit) break;
        }
        auto window = parse_window(text);
        if (!window) {
            // Unreadable: nothing to judge by. Removed, so that it is not read again.
            ::unlinkat(dir.get(), name.c_str(), 0);
            continue;
        }
        out.push_back(std::unique_ptr<owed_judgement>(
            new owed_judgement(directory / name, std::move(file), std::move(*window))));
    }
    return out;
}

owed_judgement::~owed_judgement() {
    // Removed while still locked: a cordon that finds it meanwhile sees no link and leaves it.
    ::unlink(file_.c_str());
}

}  // namespace cordon::sandbox
