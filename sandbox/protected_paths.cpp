#include "sandbox/protected_paths.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

void add_unique(std::vector<fs::path>& out, const fs::path& path) {
    std::error_code ec;
    fs::path canonical = fs::canonical(path, ec);
    if (ec) return;  // nothing there to protect
    if (std::find(out.begin(), out.end(), canonical) == out.end()) out.push_back(canonical);
}

// The files mapped into this process: its executable, the loader and every shared object.
std::vector<fs::path> mapped_files() {
    std::vector<fs::path> out;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        // address perms offset dev inode pathname
        std::istringstream fields(line);
        std::string address, perms, offset, device, inode, path;
        fields >> address >> perms >> offset >> device >> inode;
        std::getline(fields >> std::ws, path);
        if (inode == "0" || path.empty() || path.front() != '/') continue;
        if (path.ends_with(" (deleted)")) continue;  // a memfd or a replaced file
        out.emplace_back(path);
    }
    return out;
}

}  // namespace

bool is_within(const fs::path& path, const fs::path& root) {
    auto [root_end, path_it] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
    return root_end == root.end();
}

protected_paths runner_closure(std::span<const fs::path> runners) {
    protected_paths out;
    for (const fs::path& runner : runners) {
        if (!runner.empty()) add_unique(out.files, runner);
    }
    add_unique(out.files, "/proc/self/exe");
    for (const fs::path& file : mapped_files()) {
        add_unique(out.files, file);
        add_unique(out.directories, file.parent_path());
    }
    for (const char* config : {"/etc/ld.so.preload", "/etc/ld.so.cache", "/etc/ld.so.conf"}) {
        add_unique(out.files, config);
    }
    add_unique(out.directories, "/etc/ld.so.conf.d");
    std::vector<fs::path> libraries;
    for (const char* dir : {"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"}) {
        add_unique(libraries, dir);
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            // The multiarch directories (x86_64-linux-gnu, ...), where Debian keeps libc.
            const std::string name = entry.path().filename().string();
            if (name.find("-linux-") != std::string::npos && entry.is_directory(ec)) {
                add_unique(libraries, entry.path());
            }
        }
    }
    for (const fs::path& dir : libraries) {
        add_unique(out.directories, dir);
        std::error_code ec;
        const fs::path hwcaps = dir / "glibc-hwcaps";
        add_unique(out.directories, hwcaps);
        for (const auto& entry : fs::directory_iterator(hwcaps, ec)) {
            add_unique(out.directories, entry.path());
        }
    }
    return out;
}

std::optional<std::string> exposed_by(const protected_paths& paths,
                                      std::span<const fs::path> writable_roots) {
    for (const fs::path& root : writable_roots) {
        for (const auto* list : {&paths.files, &paths.directories}) {
            for (const fs::path& path : *list) {
                if (is_within(path, root)) {
                    return path.string() + " lies inside " + root.string() +
                           ", which the run could write; a confined command could replace what "
                           "later runs execute unconfined";
                }
            }
        }
    }
    return std::nullopt;
}

}  // namespace cordon::sandbox
