#include "sandbox/quarantine.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "cordon/policy.hpp"
#include "sandbox/landlock_ruleset.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// Deep enough for any tree a person makes; a deeper one is a command's trick and is not followed
// (each level holds a descriptor).
constexpr int deepest = 256;
// What a copy across filesystems may take before the rest is removed instead of kept.
constexpr std::uint64_t copy_budget_bytes = std::uint64_t{64} << 20;
constexpr std::uint64_t copy_budget_entries = 100'000;

std::string error_text(int error) {
    return std::strerror(error);
}

bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t wrote = ::write(fd, data.data(), data.size());
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(wrote));
    }
    return true;
}

// The names in the directory open (O_PATH or not) as `dir`, without "." and "..".
std::optional<std::vector<std::string>> names_in(int dir) {
    const int listed = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listed < 0) return std::nullopt;
    DIR* stream = ::fdopendir(listed);
    if (stream == nullptr) {
        ::close(listed);
        return std::nullopt;
    }
    std::vector<std::string> out;
    errno = 0;
    while (const dirent* entry = ::readdir(stream)) {
        const std::string_view name = entry->d_name;
        if (name != "." && name != "..") out.emplace_back(name);
    }
    const bool failed = errno != 0;
    ::closedir(stream);
    if (failed) return std::nullopt;
    return out;
}

std::optional<std::string> remove_tree_at(int dir, const std::string& name, int depth) {
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return errno == ENOENT ? std::nullopt : std::optional(error_text(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        if (depth >= deepest) return "nested more than " + std::to_string(deepest) + " deep";
        unique_fd inner(::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!inner) return error_text(errno);
        const auto names = names_in(inner.get());
        if (!names) return error_text(errno);
        for (const std::string& child : *names) {
            if (auto failed = remove_tree_at(inner.get(), child, depth + 1)) return failed;
        }
        if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
            return error_text(errno);
        }
        return std::nullopt;
    }
    if (::unlinkat(dir, name.c_str(), 0) != 0 && errno != ENOENT) return error_text(errno);
    return std::nullopt;
}

struct copy_budget {
    std::uint64_t bytes = copy_budget_bytes;
    std::uint64_t entries = copy_budget_entries;
};

// Copies the entry `name` of `from` to `to` (regular files, symlinks and directories; anything
// else is left out). False when the budget ran out or a step failed.
bool copy_tree_at(int from, int to, const std::string& name, copy_budget& budget, int depth) {
    if (budget.entries == 0 || depth >= deepest) return false;
    --budget.entries;
    struct stat st {};
    if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
    if (S_ISLNK(st.st_mode)) {
        std::string target(static_cast<std::size_t>(PATH_MAX), '\0');
        const ssize_t got = ::readlinkat(from, name.c_str(), target.data(), target.size());
        if (got < 0) return false;
        target.resize(static_cast<std::size_t>(got));
        return ::symlinkat(target.c_str(), to, name.c_str()) == 0;
    }
    if (S_ISREG(st.st_mode)) {
        if (static_cast<std::uint64_t>(st.st_size) > budget.bytes) return false;
        budget.bytes -= static_cast<std::uint64_t>(st.st_size);
        unique_fd in(::openat(from, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        unique_fd out(
            ::openat(to, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!in || !out) return false;
        char buffer[65536];
        for (;;) {
            const ssize_t got = ::read(in.get(), buffer, sizeof buffer);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return false;
            if (got == 0) break;
            if (!write_all(out.get(), std::string_view(buffer, static_cast<std::size_t>(got))))
                return false;
        }
        (void)::fchmod(out.get(), st.st_mode & 0700);
        return true;
    }
    if (!S_ISDIR(st.st_mode)) return true;  // a FIFO, a socket, a device: nothing to keep
    if (::mkdirat(to, name.c_str(), 0700) != 0) return false;
    unique_fd source(::openat(from, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    unique_fd target(::openat(to, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!source || !target) return false;
    const auto names = names_in(source.get());
    if (!names) return false;
    for (const std::string& child : *names) {
        if (!copy_tree_at(source.get(), target.get(), child, budget, depth + 1)) return false;
    }
    return true;
}

// "2026-12-05T07-30-01Z-4242-1": sorts by time, unique per process.
std::string judgement_name() {
    static std::atomic<unsigned> counter{0};
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H-%M-%SZ", &utc);
    return std::string(stamp) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

}  // namespace

fs::path default_quarantine_home() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state == '/') {
        return canonical_path(state) / "cordon" / "quarantine";
    }
    const fs::path home = invoking_home();
    if (home.empty()) return {};
    return home / ".local" / "state" / "cordon" / "quarantine";
}

unique_fd open_directory_no_symlinks(const fs::path& path) {
    return unique_fd(landlock::open_no_symlinks(path.c_str(), O_DIRECTORY));
}

unique_fd open_parent_no_symlinks(const fs::path& path) {
    return open_directory_no_symlinks(path.parent_path());
}

std::optional<std::string> read_regular_file(int dir, const std::string& name, std::size_t limit) {
    unique_fd fd(
        ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    if (static_cast<std::uint64_t>(st.st_size) > limit) return std::nullopt;
    std::string text;
    char buffer[16384];
    for (;;) {
        const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return std::nullopt;
        if (got == 0) break;
        text.append(buffer, static_cast<std::size_t>(got));
        if (text.size() > limit) return std::nullopt;  // grew while it was read
    }
    return text;
}

std::optional<std::string> replace_file(int dir, const std::string& name,
                                        std::string_view content) {
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return error_text(errno);
    if (!S_ISREG(st.st_mode)) return "not a regular file";
    const std::string lock = name + ".lock";
    unique_fd fd(::openat(dir, lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          st.st_mode & 0777));
    if (!fd) return "cannot create " + lock + ": " + error_text(errno);
    bool written = write_all(fd.get(), content);
    // cordon may run as root in a user's tree: the file stays the user's.
    if (written && ::geteuid() == 0) written = ::fchown(fd.get(), st.st_uid, st.st_gid) == 0;
    if (written) written = ::fchmod(fd.get(), st.st_mode & 07777) == 0;
    const int error = errno;
    fd.reset();
    if (!written || ::renameat(dir, lock.c_str(), dir, name.c_str()) != 0) {
        const int failed = written ? errno : error;
        ::unlinkat(dir, lock.c_str(), 0);
        return error_text(failed);
    }
    return std::nullopt;
}

std::optional<std::string> remove_tree(int dir, const std::string& name) {
    return remove_tree_at(dir, name, 0);
}

quarantine::quarantine(fs::path home) : home_(std::move(home)) {}

unique_fd quarantine::place_for(const fs::path& root, const fs::path& path) {
    if (home_.empty() || unusable_) return {};
    if (!directory_fd_) {
        std::error_code ec;
        fs::create_directories(home_, ec);
        unique_fd home = open_directory_no_symlinks(home_);
        struct stat st {};
        // The home must be this user's own: a quarantine others may write is no quarantine.
        if (!home || ::fstat(home.get(), &st) != 0 || st.st_uid != ::geteuid() ||
            (st.st_mode & 0022) != 0) {
            unusable_ = true;
            return {};
        }
        const std::string name = judgement_name();
        if (::mkdirat(home.get(), name.c_str(), 0700) != 0) {
            unusable_ = true;
            return {};
        }
        directory_fd_.reset(
            ::openat(home.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!directory_fd_) {
            unusable_ = true;
            return {};
        }
        directory_ = home_ / name;
    }
    // <quarantine>/<the root's own name>/<the path's directories beneath it>
    fs::path relative = root.filename() / path.parent_path().lexically_relative(root);
    unique_fd at(::fcntl(directory_fd_.get(), F_DUPFD_CLOEXEC, 0));
    for (const fs::path& part : relative.lexically_normal()) {
        const std::string name = part.string();
        if (name.empty() || name == ".") continue;
        if (::mkdirat(at.get(), name.c_str(), 0700) != 0 && errno != EEXIST) return {};
        at.reset(::openat(at.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!at) return {};
    }
    return at;
}

void quarantine::note(const fs::path& path, std::string_view why) {
    if (!directory_fd_) return;
    unique_fd manifest(::openat(directory_fd_.get(), "manifest",
                                O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!manifest) return;
    std::string line = path.string();
    line += '\t';
    line += why;
    line += '\n';
    (void)write_all(manifest.get(), line);
}

std::variant<quarantine::taken, std::string> quarantine::take(const fs::path& root,
                                                              const fs::path& path,
                                                              std::string_view why) {
    unique_fd parent = open_parent_no_symlinks(path);
    if (!parent) return "cannot open " + path.parent_path().string() + ": " + error_text(errno);
    const std::string name = path.filename().string();
    struct stat st {};
    if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return taken{};  // gone already (another run's judgement took it)
        return error_text(errno);
    }
    if (unique_fd place = place_for(root, path)) {
        // A second thing of the same name in one judgement gets a suffix.
        std::string kept = name;
        for (int attempt = 1; attempt < 100; ++attempt) {
            if (::renameat2(parent.get(), name.c_str(), place.get(), kept.c_str(),
                            RENAME_NOREPLACE) == 0) {
                note(path, why);
                return taken{(directory_ / root.filename() /
                              path.parent_path().lexically_relative(root) / kept)
                                 .lexically_normal()
                                 .string()};
            }
            if (errno != EEXIST) break;
            kept = name + "." + std::to_string(attempt);
        }
        if (errno == EXDEV) {
            // Another filesystem: a copy is kept when it is small enough, the original removed.
            copy_budget budget;
            const bool copied = copy_tree_at(parent.get(), place.get(), name, budget, 0);
            if (!copied) (void)remove_tree_at(place.get(), name, 0);
            if (auto failed = remove_tree_at(parent.get(), name, 0)) return *failed;
            if (copied) {
                note(path, why);
                return taken{(directory_ / root.filename() /
                              path.parent_path().lexically_relative(root) / name)
                                 .lexically_normal()
                                 .string()};
            }
            return taken{};
        }
    }
    if (auto failed = remove_tree_at(parent.get(), name, 0)) return *failed;
    return taken{};
}

std::string quarantine::keep_copy(const fs::path& root, const fs::path& path,
                                  std::string_view content, std::string_view why) {
    unique_fd place = place_for(root, path);
    if (!place) return {};
    std::string kept = path.filename().string();
    for (int attempt = 1; attempt < 100; ++attempt) {
        unique_fd out(::openat(place.get(), kept.c_str(),
                               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (out) {
            if (!write_all(out.get(), content)) return {};
            note(path, why);
            return (directory_ / root.filename() / path.parent_path().lexically_relative(root) /
                    kept)
                .lexically_normal()
                .string();
        }
        if (errno != EEXIST) return {};
        kept = path.filename().string() + "." + std::to_string(attempt);
    }
    return {};
}

}  // namespace cordon::sandbox
