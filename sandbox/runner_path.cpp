#include "sandbox/runner_path.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
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

const std::vector<fs::path>& trusted_directories() {
    static const std::vector<fs::path> directories = [] {
        std::vector<fs::path> out;
        for (const char* dir :
             {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
            std::error_code ec;
            fs::path canonical = fs::canonical(dir, ec);
            if (!ec && std::find(out.begin(), out.end(), canonical) == out.end()) {
                out.push_back(std::move(canonical));
            }
        }
        return out;
    }();
    return directories;
}

fs::path find_trusted_executable(std::string_view name, std::string* skipped) {
    // PATH only orders the trusted directories; an entry outside them is never searched.
    std::vector<fs::path> order;
    if (const char* env = std::getenv("PATH"); env != nullptr) {
        std::stringstream list(env);
        std::string entry;
        while (std::getline(list, entry, ':')) {
            if (entry.empty() || entry.front() != '/') continue;
            std::error_code ec;
            fs::path canonical = fs::canonical(entry, ec);
            if (ec) continue;
            const auto& trusted = trusted_directories();
            if (std::find(trusted.begin(), trusted.end(), canonical) == trusted.end()) {
                if (skipped != nullptr && skipped->empty() &&
                    fs::exists(fs::path(entry) / name, ec)) {
                    *skipped = (fs::path(entry) / name).string() +
                               " was skipped: not in a directory runners are taken from";
                }
                continue;
            }
            if (std::find(order.begin(), order.end(), canonical) == order.end()) {
                order.push_back(std::move(canonical));
            }
        }
    }
    for (const fs::path& dir : trusted_directories()) {
        if (std::find(order.begin(), order.end(), dir) == order.end()) order.push_back(dir);
    }
    for (const fs::path& dir : order) {
        std::error_code ec;
        const fs::path candidate = fs::canonical(dir / name, ec);
        if (ec) continue;
        std::string why = untrusted_because(candidate);
        if (why.empty()) return candidate;
        if (skipped != nullptr && skipped->empty()) {
            *skipped = (dir / name).string() + " was skipped: " + why;
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
