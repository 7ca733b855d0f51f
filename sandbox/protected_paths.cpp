// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/protected_paths.hpp"

#include <glob.h>

#include <algorithm>
#include <string_view>
#include <system_error>

#include "base/small_file.hpp"
#include "base/text.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view runs_later = "runs unconfined in later runs";
constexpr std::string_view loaded_later = "is loaded by programs that run unconfined later";

void add_unique(protected_paths& out, const fs::path& path, std::string_view why) {
    std::error_code ec;
    fs::path canonical = fs::canonical(path, ec);
    if (ec) return;  // nothing there to protect
    const bool known = std::any_of(out.begin(), out.end(), [&canonical](const protected_path& p) {
        return p.path == canonical;
    });
    if (!known) out.push_back({std::move(canonical), std::string(why)});
}

// The files mapped into this process: its executable, the loader and every shared object; the
// reason when `maps` cannot be read.
std::variant<std::vector<fs::path>, std::string> mapped_files(const fs::path& maps_path) {
    std::vector<fs::path> out;
    const base::read_result maps = base::read_small_file(maps_path, base::table_file_limit);
    const std::string* text = std::get_if<std::string>(&maps);
    if (text == nullptr) return std::get<base::read_error>(maps).describe(maps_path);
    for (std::string_view line : base::lines(*text)) {
        // address perms offset dev inode pathname: five fields, then spaces up to the path.
        std::string_view inode;
        for (int field = 0; field < 5 && !line.empty(); ++field) {
            const std::size_t end = std::min(line.find(' '), line.size());
            inode = line.substr(0, end);
            line.remove_prefix(end);
            line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
        }
        if (inode == "0" || line.empty() || line.front() != '/') continue;
        if (line.ends_with(" (deleted)")) continue;  // a memfd or a replaced file
        out.emplace_back(line);
    }
    return out;
}

// Collects the directories of `file` and of the files it includes, at most 8 deep.
void loader_directories(const fs::path& file, std::vector<fs::path>& out, int depth) {
    if (depth > 8) return;
    const base::read_result text = base::read_small_file(file);
    const std::string* content = std::get_if<std::string>(&text);
    if (content == nullptr) return;
    for (std::string_view entry_line : base::lines(*content)) {
        std::string line(entry_line.substr(0, entry_line.find('#')));
        // Entries are separated by white space, commas or colons ("dir=type" is one entry).
        std::replace(line.begin(), line.end(), ',', ' ');
        std::replace(line.begin(), line.end(), ':', ' ');
        std::replace(line.begin(), line.end(), '\t', ' ');
        std::vector<std::string_view> words;
        for (std::string_view word : base::split(line, ' ')) {
            if (!word.empty()) words.push_back(word);
        }
        if (words.empty()) continue;
        if (words.front() == "include") {
            for (std::size_t i = 1; i < words.size(); ++i) {
                const fs::path pattern(words[i]);
                const fs::path glob_path =
                    pattern.is_absolute() ? pattern : file.parent_path() / pattern;
                glob_t matches{};
                if (::glob(glob_path.c_str(), 0, nullptr, &matches) == 0) {
                    for (std::size_t m = 0; m < matches.gl_pathc; ++m) {
                        loader_directories(matches.gl_pathv[m], out, depth + 1);
                    }
                }
                ::globfree(&matches);
            }
            continue;
        }
        for (std::string_view word : words) {
            word = word.substr(0, word.find('='));
            if (!word.empty() && word.front() == '/') out.emplace_back(word);
        }
    }
}

}  // namespace

std::vector<fs::path> loader_configuration_directories(const fs::path& conf) {
    std::vector<fs::path> out;
    loader_directories(conf, out, 0);
    return out;
}

bool is_within(const fs::path& path, const fs::path& root) {
    auto [root_end, path_it] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
    return root_end == root.end();
}

std::variant<protected_paths, std::string> runner_closure(
    std::span<const fs::path> runners, std::span<const fs::path> runner_directories,
    const process_view& view) {
    protected_paths out;
    for (const fs::path& runner : runners) {
        if (!runner.empty()) add_unique(out, runner, runs_later);
    }
    // This executable by the name it was started from: a program replaced since (a package
    // upgrade) shows as "<path> (deleted)", and what now lies at <path> is what runs next.
    std::error_code unresolved;
    fs::path self = fs::read_symlink(view.exe, unresolved);
    if (unresolved) return "cannot resolve " + view.exe.string() + ": " + unresolved.message();
    constexpr std::string_view deleted = " (deleted)";
    if (std::string name = self.string(); name.ends_with(deleted)) {
        self = name.substr(0, name.size() - deleted.size());
    }
    if (!self.is_absolute()) {
        return "cannot resolve " + view.exe.string() + ": it names \"" + self.string() + "\"";
    }
    std::error_code unnormal;
    fs::path canonical_self = fs::weakly_canonical(self, unnormal);
    if (unnormal) canonical_self = self.lexically_normal();
    out.push_back({std::move(canonical_self), std::string(runs_later)});
    for (const fs::path& directory : runner_directories) {
        add_unique(out, directory, "is where cordon takes its runners from");
    }
    auto mapped = mapped_files(view.maps);
    if (auto* reason = std::get_if<std::string>(&mapped)) return *reason;
    for (const fs::path& file : std::get<std::vector<fs::path>>(mapped)) {
        add_unique(out, file, loaded_later);
        add_unique(out, file.parent_path(), loaded_later);
    }
    for (const char* config :
         {"/etc/ld.so.preload", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"}) {
        add_unique(out, config, "configures the loader of programs that run unconfined later");
    }
    std::vector<fs::path> libraries;
    for (fs::path& dir : loader_configuration_directories("/etc/ld.so.conf")) {
        libraries.push_back(std::move(dir));
    }
    for (const char* dir : {"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"}) {
        libraries.emplace_back(dir);
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            // The multiarch directories (x86_64-linux-gnu, ...), where Debian keeps libc.
            const std::string name = entry.path().filename().string();
            if (name.find("-linux-") != std::string::npos && entry.is_directory(ec)) {
                libraries.push_back(entry.path());
            }
        }
    }
    for (const fs::path& dir : libraries) {
        add_unique(out, dir, loaded_later);
        std::error_code ec;
        const fs::path hwcaps = dir / "glibc-hwcaps";
        add_unique(out, hwcaps, loaded_later);
        for (const auto& entry : fs::directory_iterator(hwcaps, ec)) {
            add_unique(out, entry.path(), loaded_later);
        }
    }
    return out;
}

bool inside_pattern(const fs::path& root, const fs::path& pattern) {
    const std::string last = pattern.filename().string();
    if (last.empty() || last.back() != '*') return false;
    const fs::path directory = pattern.parent_path();
    if (!is_within(root, directory) || root == directory) return false;
    const std::string prefix = last.substr(0, last.size() - 1);
    const auto depth = std::distance(directory.begin(), directory.end());
    const fs::path entry = *std::next(root.begin(), depth);
    return entry.string().rfind(prefix, 0) == 0;
}

std::optional<std::string> exposed_by(std::span<const protected_path> paths,
                                      std::span<const fs::path> writable_roots) {
    for (const fs::path& root : writable_roots) {
        for (const protected_path& p : paths) {
            if (is_within(p.path, root)) {
                return p.path.string() + " lies inside " + root.string() +
                       ", which the command could write, and " + p.why;
            }
            if (inside_pattern(root, p.path)) {
                return root.string() + " is one of " + p.path.string() + ", which " + p.why;
            }
        }
    }
    return std::nullopt;
}

}  // namespace cordon::sandbox
