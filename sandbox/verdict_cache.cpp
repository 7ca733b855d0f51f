#include "sandbox/verdict_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/small_file.hpp"
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
    unique_fd fd(::openat(directory_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
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
    return true;
}

void verdict_cache::forget(const std::string& name) const {
    (void)::unlinkat(directory_.get(), name.c_str(), 0);
}

}  // namespace cordon::sandbox
