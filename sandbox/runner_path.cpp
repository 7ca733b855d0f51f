#include "sandbox/runner_path.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <vector>

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

std::string owned_badly(const fs::path& path, const struct stat& st) {
    if (st.st_uid != 0) return path.string() + " is owned by uid " + std::to_string(st.st_uid);
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return path.string() + " is writable by group or others";
    }
    return {};
}

}  // namespace

std::string untrusted_because(const fs::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        const int error = errno;
        return path.string() + ": " + std::strerror(error);
    }
    if (!S_ISREG(st.st_mode)) return path.string() + " is not a regular file";
    if ((st.st_mode & S_IXUSR) == 0) return path.string() + " is not executable";
    if (std::string why = owned_badly(path, st); !why.empty()) return why;
    for (fs::path dir = path.parent_path();; dir = dir.parent_path()) {
        if (::lstat(dir.c_str(), &st) != 0) {
            const int error = errno;
            return dir.string() + ": " + std::strerror(error);
        }
        if (!S_ISDIR(st.st_mode)) return dir.string() + " is not a directory";
        if (std::string why = owned_badly(dir, st); !why.empty()) return why;
        if (dir == dir.root_path()) break;
    }
    return {};
}

namespace {

// A trusted directory, canonical, and the inode it names: a PATH entry is matched by what it
// names (one stat) rather than by spelling it out again (a readlink per component).
struct trusted_directory {
    fs::path path;
    dev_t device = 0;
    ino_t inode = 0;
};

const std::vector<trusted_directory>& trusted_identities() {
    static const std::vector<trusted_directory> directories = [] {
        std::vector<trusted_directory> out;
        for (const char* dir :
             {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
            std::error_code ec;
            fs::path canonical = fs::canonical(dir, ec);
            struct stat st {};
            if (ec || ::stat(canonical.c_str(), &st) != 0) continue;
            const bool seen = std::any_of(
                out.begin(), out.end(), [&](const auto& known) { return known.path == canonical; });
            if (!seen) out.push_back({std::move(canonical), st.st_dev, st.st_ino});
        }
        return out;
    }();
    return directories;
}

// The trusted directory a PATH entry names, or nullptr.
const fs::path* trusted_directory_of(const std::string& entry) {
    struct stat st {};
    if (::stat(entry.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return nullptr;
    for (const auto& dir : trusted_identities()) {
        if (dir.device == st.st_dev && dir.inode == st.st_ino) return &dir.path;
    }
    return nullptr;
}

// `name` in the canonical directory `dir`, canonical itself; empty when there is no such file.
// Only a symlink needs resolving: `dir` already is.
fs::path canonical_entry(const fs::path& dir, std::string_view name) {
    const fs::path candidate = dir / name;
    struct stat st {};
    if (::lstat(candidate.c_str(), &st) != 0) return {};
    if (!S_ISLNK(st.st_mode) && name.find('/') == std::string_view::npos && name != "." &&
        name != "..") {
        return candidate;
    }
    std::error_code ec;
    fs::path canonical = fs::canonical(candidate, ec);
    return ec ? fs::path() : canonical;
}

}  // namespace

const std::vector<fs::path>& trusted_directories() {
    static const std::vector<fs::path> directories = [] {
        std::vector<fs::path> out;
        for (const auto& dir : trusted_identities())
            out.push_back(dir.path);
        return out;
    }();
    return directories;
}

fs::path find_trusted_executable(std::string_view name, std::string* skipped) {
    // PATH only orders the trusted directories; an entry outside them is never searched.
    std::vector<const fs::path*> order;
    if (const char* env = std::getenv("PATH"); env != nullptr) {
        const std::string_view list = env;
        for (std::size_t start = 0; start <= list.size();) {
            const std::size_t end = std::min(list.find(':', start), list.size());
            const std::string entry(list.substr(start, end - start));
            start = end + 1;
            if (entry.empty() || entry.front() != '/') continue;
            const fs::path* trusted = trusted_directory_of(entry);
            if (trusted == nullptr) {
                std::error_code ec;
                if (skipped != nullptr && skipped->empty() &&
                    fs::exists(fs::path(entry) / name, ec)) {
                    *skipped = (fs::path(entry) / name).string() +
                               " was skipped: not in a directory runners are taken from";
                }
                continue;
            }
            if (std::find(order.begin(), order.end(), trusted) == order.end()) {
                order.push_back(trusted);
            }
        }
    }
    for (const auto& dir : trusted_identities()) {
        if (std::find(order.begin(), order.end(), &dir.path) == order.end()) {
            order.push_back(&dir.path);
        }
    }
    for (const fs::path* dir : order) {
        const fs::path candidate = canonical_entry(*dir, name);
        if (candidate.empty()) continue;
        std::string why = untrusted_because(candidate);
        if (why.empty()) return candidate;
        if (skipped != nullptr && skipped->empty()) {
            *skipped = (*dir / name).string() + " was skipped: " + why;
        }
    }
    return {};
}

fs::path default_launcher_path() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    return self.parent_path() / "cordon-landlock";
}

}  // namespace cordon::sandbox
