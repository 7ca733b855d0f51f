#include "sandbox/private_tmp.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>
#include <system_error>
#include <vector>

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view prefix = "cordon-tmp-";

// Opens `name` in `parent` as a directory of this uid, not through a symlink.
unique_fd open_own_directory(int parent, const char* name) {
    unique_fd fd(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid()) return unique_fd();
    return fd;
}

// True when `name` in `parent` still is the directory open as `fd`.
bool still_there(int parent, const char* name, int fd) {
    struct stat by_fd {};
    struct stat by_name {};
    return ::fstat(fd, &by_fd) == 0 &&
           ::fstatat(parent, name, &by_name, AT_SYMLINK_NOFOLLOW) == 0 &&
           by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

}  // namespace

std::size_t sweep_dead_private_tmps(const fs::path& parent) {
    unique_fd listing(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listing) return 0;
    std::vector<std::string> names;
    {
        unique_fd copy(::fcntl(listing.get(), F_DUPFD_CLOEXEC, 0));
        DIR* entries = copy ? ::fdopendir(copy.release()) : nullptr;
        if (entries == nullptr) return 0;
        while (const dirent* entry = ::readdir(entries)) {
            if (std::string_view(entry->d_name).rfind(prefix, 0) == 0) {
                names.emplace_back(entry->d_name);
            }
        }
        ::closedir(entries);
    }
    std::size_t removed = 0;
    for (const std::string& name : names) {
        unique_fd directory = open_own_directory(listing.get(), name.c_str());
        // A held lock: its cordon (or a command of its run) is alive.
        if (!directory || ::flock(directory.get(), LOCK_EX | LOCK_NB) != 0) continue;
        if (!still_there(listing.get(), name.c_str(), directory.get())) continue;
        std::error_code ec;
        fs::remove_all(parent / name, ec);  // never follows a symlink inside
        if (!ec) ++removed;
    }
    if (removed > 0) spdlog::info("removed {} private /tmp left by cordons that are gone", removed);
    return removed;
}

std::variant<std::shared_ptr<const private_tmp_directory>, std::string>
private_tmp_directory::create(const fs::path& parent) {
    {
        // Once per parent and process: the first private /tmp sweeps, the others need not.
        static std::mutex mutex;
        static std::set<fs::path> swept;
        std::lock_guard lock(mutex);
        if (swept.insert(parent).second) (void)sweep_dead_private_tmps(parent);
    }
    unique_fd listing(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listing) return "cannot open " + parent.string() + ": " + std::strerror(errno);
    // Another cordon's sweep may take a directory between mkdtemp and the lock (it is unlocked
    // for that instant): it is then locked or gone, and another name is tried.
    for (int attempt = 0; attempt < 8; ++attempt) {
        std::string path = (parent / (std::string(prefix) + "XXXXXX")).string();
        if (::mkdtemp(path.data()) == nullptr) {
            return "cannot make the run's private /tmp: " + std::string(std::strerror(errno));
        }
        const std::string name = fs::path(path).filename().string();
        unique_fd lock = open_own_directory(listing.get(), name.c_str());
        if (lock && ::flock(lock.get(), LOCK_EX | LOCK_NB) == 0 &&
            still_there(listing.get(), name.c_str(), lock.get())) {
            return std::shared_ptr<const private_tmp_directory>(
                new private_tmp_directory(std::move(path), std::move(lock)));
        }
    }
    return std::string("cannot make the run's private /tmp: another cordon kept removing it");
}

private_tmp_directory::~private_tmp_directory() {
    std::error_code ec;
    fs::remove_all(path_, ec);  // never follows a symlink the command left; unlocked after
}

}  // namespace cordon::sandbox
