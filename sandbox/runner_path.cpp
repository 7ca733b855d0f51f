// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/runner_path.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include "cordon/local_provider.hpp"

// CMake's libexec directory for cordon (sandbox/CMakeLists.txt), relative to its bin and lib
// directories and absolute, as this build was configured to be installed.
#if !defined(CORDON_LAUNCHER_RELATIVE_DIR) || !defined(CORDON_LAUNCHER_LIBRARY_RELATIVE_DIR) || \
    !defined(CORDON_LAUNCHER_DIR)
#error "CORDON_LAUNCHER_*DIR come from sandbox/CMakeLists.txt"
#endif

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// An object in the module this file is linked into, for dladdr(3) to name that module.
const char module_marker = 0;

std::string owned_by_another(const fs::path& path, const struct stat& st, uid_t also_owner) {
    if (st.st_uid == 0 || st.st_uid == also_owner) return {};
    return path.string() + " is owned by uid " + std::to_string(st.st_uid);
}

bool writable_by_others(const struct stat& st) {
    return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

std::string writable_by_others_message(const fs::path& path) {
    return path.string() + " is writable by group or others";
}

// Why `dir` or a directory above it cannot be trusted (empty when none). `child_is_directory`:
// the entry beneath `dir` on the way is a directory, which a sticky `dir` keeps in place.
std::string directories_untrusted_because(fs::path dir, uid_t also_owner, bool child_is_directory) {
    for (;; dir = dir.parent_path()) {
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0) {
            const int error = errno;
            return dir.string() + ": " + std::strerror(error);
        }
        if (!S_ISDIR(st.st_mode)) return dir.string() + " is not a directory";
        if (std::string why = owned_by_another(dir, st, also_owner); !why.empty()) return why;
        // In a sticky directory only an entry's owner, the directory's owner or a privileged
        // process may remove or rename the entry (unlink(2), EPERM); a file could still be
        // hard-linked in by anyone, a directory cannot.
        const bool keeps_child = child_is_directory && (st.st_mode & S_ISVTX) != 0;
        if (writable_by_others(st) && !keeps_child) return writable_by_others_message(dir);
        if (dir == dir.root_path()) break;
        child_is_directory = true;
    }
    return {};
}

}  // namespace

std::string untrusted_because(const fs::path& path, uid_t also_owner) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        const int error = errno;
        return path.string() + ": " + std::strerror(error);
    }
    if (!S_ISREG(st.st_mode)) return path.string() + " is not a regular file";
    if ((st.st_mode & S_IXUSR) == 0) return path.string() + " is not executable";
    if (std::string why = owned_by_another(path, st, also_owner); !why.empty()) return why;
    if (writable_by_others(st)) return writable_by_others_message(path);
    return directories_untrusted_because(path.parent_path(), also_owner, false);
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

namespace {

constexpr std::string_view launcher_name = "cordon-landlock";

// Why a symbolic link on the way to `path` (absolute, lexically normal) could be pointed
// elsewhere by someone else: a link cannot be changed, only replaced, by whoever may write the
// directory holding it. Empty when there is none such.
std::string links_untrusted_because(const fs::path& path, uid_t also_owner) {
    fs::path prefix;
    for (const fs::path& component : path) {
        prefix /= component;
        struct stat st {};
        if (::lstat(prefix.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
        std::error_code ec;
        const fs::path holder = fs::canonical(prefix.parent_path(), ec);
        if (ec) return prefix.parent_path().string() + ": " + ec.message();
        if (std::string why = directories_untrusted_because(holder, also_owner, false);
            !why.empty()) {
            return "the symbolic link " + prefix.string() + " could be replaced: " + why;
        }
    }
    return {};
}

}  // namespace

bool prefix_open_to_others(fs::path dir, const fs::path& relative) {
    for (const fs::path& part : relative) {
        if (part != "..") break;
        dir = dir.parent_path();
    }
    struct stat st {};
    return ::stat(dir.c_str(), &st) != 0 || writable_by_others(st);
}

std::vector<fs::path> launcher_candidates(const fs::path& executable,
                                          const fs::path& relative_libexec,
                                          const fs::path& absolute_libexec, const fs::path& library,
                                          const fs::path& library_relative_libexec,
                                          const fs::path& built_against_libexec) {
    std::vector<fs::path> out;
    const auto add = [&out](const fs::path& candidate) {
        fs::path normal = candidate.lexically_normal();
        if (std::find(out.begin(), out.end(), normal) == out.end())
            out.push_back(std::move(normal));
    };
    const fs::path dir = executable.parent_path();
    add(dir / launcher_name);
    if (!relative_libexec.empty()) add(dir / relative_libexec / launcher_name);
    if (library.is_absolute() && !library_relative_libexec.empty()) {
        add(library.parent_path() / library_relative_libexec / launcher_name);
    }
    if (built_against_libexec.is_absolute()) add(built_against_libexec / launcher_name);
    if (absolute_libexec.is_absolute()) add(absolute_libexec / launcher_name);
    return out;
}

namespace {

std::mutex built_against_mutex;
fs::path& built_against() {
    static fs::path directory;
    return directory;
}

}  // namespace

fs::path built_against_libexec() {
    std::lock_guard lock(built_against_mutex);
    return built_against();
}

void detail::note_installed_libexec(const char* directory) noexcept {
    if (directory == nullptr || directory[0] != '/') return;
    try {
        std::lock_guard lock(built_against_mutex);
        built_against() = directory;
    } catch (...) {
        // Out of memory before main(): the configured directory is still looked at.
    }
}

namespace {

// This process's program (/proc/self/exe) and, when cordon's code is in a shared library, that
// library; nullopt when /proc/self/exe cannot be read.
struct this_process {
    fs::path program;
    fs::path library;
};

std::optional<this_process> locate_this_process() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec || !self.is_absolute()) return std::nullopt;
    // A program replaced since it started (a package upgrade) shows as "<path> (deleted)": what
    // lies beside <path> now belongs to the new one, which is still this program's place.
    constexpr std::string_view deleted = " (deleted)";
    if (std::string name = self.string(); name.ends_with(deleted)) {
        self = name.substr(0, name.size() - deleted.size());
    }
    // The shared object this code is in, when it is not the program: libcordon.so, as the
    // dynamic loader mapped it (its link map's name: absolute when it was found through an
    // absolute path, the only kind taken). The program's own map has an empty name; dladdr's
    // dli_fname would give argv[0] for it instead, which the caller chose, relative to the cwd.
    fs::path library;
    Dl_info info{};
    struct link_map* map = nullptr;
    if (::dladdr1(&module_marker, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 &&
        map != nullptr && map->l_name != nullptr && map->l_name[0] == '/') {
        library = fs::weakly_canonical(map->l_name, ec);
        if (ec) library.clear();
    }
    return this_process{std::move(self), std::move(library)};
}

}  // namespace

std::vector<fs::path> launcher_candidates() {
    const std::optional<this_process> here = locate_this_process();
    if (!here) return {};
    // A prefix whose root others may write (an agent built in /tmp/agent/bin: the relative
    // libexec climbs to /tmp) holds entries of theirs: not a place to look for the launcher, and
    // a launcher another user put there would only make every run fail.
    const fs::path relative =
        prefix_open_to_others(here->program.parent_path(), CORDON_LAUNCHER_RELATIVE_DIR)
            ? fs::path()
            : fs::path(CORDON_LAUNCHER_RELATIVE_DIR);
    const fs::path library_relative =
        here->library.empty() || prefix_open_to_others(here->library.parent_path(),
                                                       CORDON_LAUNCHER_LIBRARY_RELATIVE_DIR)
            ? fs::path()
            : fs::path(CORDON_LAUNCHER_LIBRARY_RELATIVE_DIR);
    return launcher_candidates(here->program, relative, CORDON_LAUNCHER_DIR, here->library,
                               library_relative, built_against_libexec());
}

std::vector<fs::path> launcher_places() {
    const std::optional<this_process> here = locate_this_process();
    if (!here) return {};
    return launcher_candidates(here->program, CORDON_LAUNCHER_RELATIVE_DIR, CORDON_LAUNCHER_DIR,
                               here->library, CORDON_LAUNCHER_LIBRARY_RELATIVE_DIR,
                               built_against_libexec());
}

launcher_lookup find_launcher(std::span<const fs::path> candidates) {
    launcher_lookup out;
    const uid_t self = ::geteuid();
    for (const fs::path& candidate : candidates) {
        // Every symbolic link on the way is protected with the launcher: a command that could
        // point one elsewhere would choose the next process's launcher.
        const fs::path normal = candidate.lexically_normal();
        fs::path prefix;
        for (const fs::path& component : normal) {
            prefix /= component;
            struct stat st {};
            if (::lstat(prefix.c_str(), &st) != 0) break;
            if (!S_ISLNK(st.st_mode)) continue;
            std::error_code ec;
            fs::path holder = fs::canonical(prefix.parent_path(), ec);
            out.links.push_back(ec ? prefix : holder / prefix.filename());
            // A link that points nowhere hides where a launcher would appear: whoever may
            // create its target chooses it, and the place it names cannot be protected.
            if (::stat(prefix.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
                out.path = candidate;
                out.refused = "cordon-landlock at " + candidate.string() +
                              " is refused: the symbolic link " + prefix.string() +
                              " on the way points to nothing";
                return out;
            }
        }
        struct stat st {};
        if (::lstat(candidate.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
            out.passed_over.push_back(candidate);
            continue;
        }
        std::error_code ec;
        fs::path canonical = fs::canonical(candidate, ec);
        std::string why;
        if (ec) {
            out.path = candidate;
            why = candidate.string() + ": " + ec.message();
        } else {
            out.path = std::move(canonical);
            why = untrusted_because(out.path, self);
            if (why.empty()) why = links_untrusted_because(normal, self);
        }
        if (!why.empty()) {
            out.refused = "cordon-landlock at " + candidate.string() + " is refused: " + why;
        }
        return out;
    }
    out.refused = "cordon-landlock not found";
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        out.refused += (i == 0 ? " (looked for " : ", ") + candidates[i].string();
    }
    out.refused += candidates.empty() ? ": /proc/self/exe cannot be read" : ")";
    return out;
}

}  // namespace cordon::sandbox
