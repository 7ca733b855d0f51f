#include "runtime/cgroup.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <system_error>
#include <vector>

namespace cordon::runtime {

namespace fs = std::filesystem;

namespace {

std::mutex reason_mutex;
std::string last_reason;

void set_reason(std::string reason) {
    spdlog::debug("cgroup containment unavailable: {}", reason);
    std::lock_guard lock(reason_mutex);
    last_reason = std::move(reason);
}

// The cgroup2 mount point from /proc/self/mountinfo (field 5 is the mount point; the filesystem
// type follows the " - " separator).
std::optional<fs::path> cgroup2_mount() {
    std::ifstream mountinfo("/proc/self/mountinfo");
    std::string line;
    while (std::getline(mountinfo, line)) {
        auto separator = line.find(" - ");
        if (separator == std::string::npos) continue;
        std::istringstream tail(line.substr(separator + 3));
        std::string fstype;
        tail >> fstype;
        if (fstype != "cgroup2") continue;
        std::istringstream head(line.substr(0, separator));
        std::string field;
        for (int i = 0; i < 5 && head >> field; ++i) {
        }
        return fs::path(field);
    }
    return std::nullopt;
}

// This process's cgroup v2 path ("0::/path" in /proc/self/cgroup).
std::optional<std::string> own_cgroup() {
    std::ifstream cgroup("/proc/self/cgroup");
    std::string line;
    while (std::getline(cgroup, line)) {
        if (line.rfind("0::", 0) == 0) return line.substr(3);
    }
    return std::nullopt;
}

bool write_file(const fs::path& path, std::string_view text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

std::string random_suffix() {
    std::random_device device;
    std::ostringstream out;
    out << std::hex << device() << device();
    return out.str();
}

}  // namespace

std::string cgroup_host::unavailable_reason() {
    std::lock_guard lock(reason_mutex);
    return last_reason;
}

namespace {

// Each host holds an exclusive flock(2) on a lock file named after its cgroup for as long as it
// lives; the kernel releases it when the process dies, whatever its pid namespace. A pid would
// not do: cordons in other pid namespaces share the cgroup tree.
fs::path lock_directory() { return "/var/tmp/cordon-cgroup-locks-" + std::to_string(::geteuid()); }

// A cordon that was killed (SIGKILL, a crash) left its cgroup behind, possibly with the trees of
// its last runs still inside. Whoever creates the next host ends them. Only a cgroup whose lock
// file exists and can be locked is touched: no lock file (another mount namespace, another
// user) proves nothing, and a held lock means its owner is alive.
void reap_stale_hosts(const fs::path& base) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(base, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("cordon-", 0) != 0 || !entry.is_directory(ec)) continue;
        const fs::path lock_path = lock_directory() / (name + ".lock");
        unique_fd lock(::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
        if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) continue;
        std::vector<fs::path> runs;
        for (const auto& run : fs::directory_iterator(entry.path(), ec)) {
            if (run.is_directory(ec)) runs.push_back(run.path());
        }
        for (const auto& run : runs) {
            if (!write_file(run / "cgroup.kill", "1")) {
                std::ifstream procs(run / "cgroup.procs");
                pid_t pid;
                while (procs >> pid)
                    ::kill(pid, SIGKILL);
            }
        }
        for (const auto& run : runs) {
            for (int attempt = 0; attempt < 200 && ::rmdir(run.c_str()) != 0 && errno == EBUSY;
                 ++attempt) {
                ::usleep(1000);
            }
        }
        if (::rmdir(entry.path().c_str()) == 0) {
            ::unlink(lock_path.c_str());
            spdlog::info("removed the cgroup of a cordon that is gone: {}", entry.path().string());
        }
    }
}

}  // namespace

std::shared_ptr<cgroup_host> cgroup_host::create() {
    auto mount = cgroup2_mount();
    if (!mount) {
        set_reason("no cgroup2 filesystem is mounted");
        return nullptr;
    }
    auto own = own_cgroup();
    if (!own) {
        set_reason("this process has no cgroup v2 membership");
        return nullptr;
    }
    fs::path base = *mount / fs::path(*own).relative_path();
    if (!fs::exists(base / "cgroup.procs")) {
        set_reason("the process's cgroup " + base.string() + " is not visible");
        return nullptr;
    }
    reap_stale_hosts(base);
    const std::string name = "cordon-" + std::to_string(::getpid()) + "-" + random_suffix();
    fs::path directory = base / name;
    // The lock is held before the cgroup exists, so no reaper ever sees it unowned.
    ::mkdir(lock_directory().c_str(), 0700);
    const fs::path lock_path = lock_directory() / (name + ".lock");
    unique_fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                          0600));
    if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
        set_reason("cannot lock " + lock_path.string() + ": " + std::strerror(errno));
        return nullptr;
    }
    if (::mkdir(directory.c_str(), 0755) != 0) {
        set_reason("cannot create " + directory.string() + ": " + std::strerror(errno));
        ::unlink(lock_path.c_str());
        return nullptr;
    }
    if (!fs::exists(directory / "cgroup.kill")) {
        ::rmdir(directory.c_str());
        ::unlink(lock_path.c_str());
        set_reason("the kernel has no cgroup.kill (Linux 5.14 or later is needed)");
        return nullptr;
    }
    return std::shared_ptr<cgroup_host>(
        new cgroup_host(std::move(directory), std::move(lock), lock_path));
}

cgroup_host::~cgroup_host() {
    if (::rmdir(directory_.c_str()) != 0) {
        // Left for the next host to reap once this process (and with it the lock) is gone.
        spdlog::debug("cannot remove {}: {}", directory_.string(), std::strerror(errno));
        return;
    }
    ::unlink(lock_path_.c_str());
}

std::unique_ptr<cgroup_scope> cgroup_host::new_scope() {
    fs::path directory = directory_ / ("run-" + std::to_string(counter_.fetch_add(1) + 1));
    if (::mkdir(directory.c_str(), 0755) != 0) {
        spdlog::warn("cannot create run cgroup {}: {}", directory.string(), std::strerror(errno));
        return nullptr;
    }
    int procs = ::open((directory / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (procs < 0) {
        spdlog::warn("cannot open {}/cgroup.procs: {}", directory.string(), std::strerror(errno));
        ::rmdir(directory.c_str());
        return nullptr;
    }
    return std::make_unique<cgroup_scope>(shared_from_this(), std::move(directory),
                                          unique_fd(procs));
}

cgroup_scope::cgroup_scope(std::shared_ptr<cgroup_host> host, fs::path directory, unique_fd procs)
    : host_(std::move(host)), directory_(std::move(directory)), procs_(std::move(procs)) {}

cgroup_scope::~cgroup_scope() {
    if (removed_) return;
    kill_all();
    // The kill is asynchronous; give the kernel a moment to empty the cgroup.
    for (int attempt = 0; attempt < 200 && !remove(); ++attempt)
        ::usleep(1000);
    if (!removed_) spdlog::warn("cgroup {} could not be removed", directory_.string());
}

void cgroup_scope::signal_all(int signal) const {
    std::ifstream procs(directory_ / "cgroup.procs");
    pid_t pid;
    while (procs >> pid)
        ::kill(pid, signal);
}

void cgroup_scope::kill_all() const {
    if (write_file(directory_ / "cgroup.kill", "1")) return;
    signal_all(SIGKILL);
}

bool cgroup_scope::populated() const {
    std::ifstream events(directory_ / "cgroup.events");
    std::string key;
    int value = 0;
    while (events >> key >> value) {
        if (key == "populated") return value != 0;
    }
    return false;
}

bool cgroup_scope::remove() {
    if (removed_) return true;
    if (::rmdir(directory_.c_str()) == 0 || errno == ENOENT) removed_ = true;
    return removed_;
}

}  // namespace cordon::runtime
