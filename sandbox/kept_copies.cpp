// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/kept_copies.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <map>
#include <optional>

#include "cordon/policy.hpp"
#include "sandbox/directory_listing.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/run_journal.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

struct kept_copies::node {
    std::string name;
    mode_t mode = 0;  // type and permissions
    uid_t uid = 0;
    gid_t gid = 0;
    nlink_t links = 1;
    std::string content;  // a file's bytes, a symlink's target
    std::vector<node> children;
};

namespace {

struct budget {
    std::uint64_t bytes = kept_copies::total_limit;
    std::size_t entries = kept_copies::entry_limit;
};

// The names in the directory `dir`, sorted: a copy and the tree compare in one order.
std::optional<std::vector<std::string>> names_of(int dir) {
    auto names = names_in(dir);
    if (names) std::sort(names->begin(), names->end());
    return names;
}

std::optional<kept_copies::node> copy_of(int dir, const std::string& name, budget& left) {
    if (left.entries == 0) return std::nullopt;
    --left.entries;
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
    kept_copies::node out;
    out.name = name;
    out.mode = st.st_mode;
    out.uid = st.st_uid;
    out.gid = st.st_gid;
    out.links = st.st_nlink;
    if (S_ISREG(st.st_mode)) {
        const auto size = static_cast<std::uint64_t>(st.st_size);
        if (size > kept_copies::file_limit || size > left.bytes) return std::nullopt;
        auto content = read_regular_file(dir, name, kept_copies::file_limit);
        if (!content) return std::nullopt;
        left.bytes -= std::min<std::uint64_t>(left.bytes, content->size());
        out.content = std::move(*content);
    } else if (S_ISLNK(st.st_mode)) {
        std::string target(PATH_MAX, '\0');
        const ssize_t got = ::readlinkat(dir, name.c_str(), target.data(), target.size());
        if (got < 0) return std::nullopt;
        target.resize(static_cast<std::size_t>(got));
        out.content = std::move(target);
    } else if (S_ISDIR(st.st_mode)) {
        unique_fd inner(::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!inner) return std::nullopt;
        const auto names = names_of(inner.get());
        if (!names) return std::nullopt;
        for (const std::string& child : *names) {
            auto copied = copy_of(inner.get(), child, left);
            if (!copied) return std::nullopt;
            out.children.push_back(std::move(*copied));
        }
    }
    return out;
}

// Whether the entry `name` of `dir` is still what `copy` says.
bool same(int dir, const kept_copies::node& copy) {
    struct stat st {};
    if (::fstatat(dir, copy.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
    if (st.st_mode != copy.mode || st.st_uid != copy.uid || st.st_gid != copy.gid) return false;
    if (S_ISREG(st.st_mode)) {
        // A name more: a command could write it through that one.
        if (st.st_nlink > copy.links) return false;
        return read_regular_file(dir, copy.name, kept_copies::file_limit) == copy.content;
    }
    if (S_ISLNK(st.st_mode)) {
        std::string target(PATH_MAX, '\0');
        const ssize_t got = ::readlinkat(dir, copy.name.c_str(), target.data(), target.size());
        return got >= 0 &&
               std::string_view(target.data(), static_cast<std::size_t>(got)) == copy.content;
    }
    if (!S_ISDIR(st.st_mode)) return true;
    unique_fd inner(
        ::openat(dir, copy.name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!inner) return false;
    const auto names = names_of(inner.get());
    if (!names || names->size() != copy.children.size()) return false;
    for (std::size_t i = 0; i < names->size(); ++i) {
        if ((*names)[i] != copy.children[i].name || !same(inner.get(), copy.children[i])) {
            return false;
        }
    }
    return true;
}

// Makes the entry `copy.name` in `dir` as the copy says; false when a step failed.
bool write_back(int dir, const kept_copies::node& copy) {
    const bool as_root = ::geteuid() == 0;
    const mode_t permissions = copy.mode & 07777;
    if (S_ISREG(copy.mode)) {
        unique_fd out(::openat(dir, copy.name.c_str(),
                               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!out) return false;
        std::string_view data = copy.content;
        while (!data.empty()) {
            const ssize_t wrote = ::write(out.get(), data.data(), data.size());
            if (wrote < 0 && errno == EINTR) continue;
            if (wrote <= 0) return false;
            data.remove_prefix(static_cast<std::size_t>(wrote));
        }
        if (as_root && ::fchown(out.get(), copy.uid, copy.gid) != 0) return false;
        return ::fchmod(out.get(), permissions) == 0;
    }
    if (S_ISLNK(copy.mode)) {
        if (::symlinkat(copy.content.c_str(), dir, copy.name.c_str()) != 0) return false;
        if (as_root &&
            ::fchownat(dir, copy.name.c_str(), copy.uid, copy.gid, AT_SYMLINK_NOFOLLOW) != 0) {
            return false;
        }
        return true;
    }
    if (!S_ISDIR(copy.mode)) return true;  // a FIFO, a socket, a device: not made again
    if (::mkdirat(dir, copy.name.c_str(), 0700) != 0) return false;
    unique_fd inner(
        ::openat(dir, copy.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!inner) return false;
    for (const kept_copies::node& child : copy.children) {
        if (!write_back(inner.get(), child)) return false;
    }
    if (as_root && ::fchown(inner.get(), copy.uid, copy.gid) != 0) return false;
    return ::fchmod(inner.get(), permissions) == 0;
}

// The directory `dir` (beneath `root`) opened without following a symlink, made again (owned as
// the root is) where the run removed it, and taken into `away` where it replaced it with
// something else.
unique_fd reopen_directory(const fs::path& root, const fs::path& dir, quarantine& away) {
    unique_fd at = open_directory_no_symlinks(root);
    if (!at) return {};
    struct stat root_st {};
    if (::fstat(at.get(), &root_st) != 0) return {};
    fs::path walked = root;
    for (const fs::path& part : dir.lexically_relative(root)) {
        const std::string name = part.string();
        if (name == ".") continue;
        walked /= part;
        unique_fd next(
            ::openat(at.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next && (errno == ENOTDIR || errno == ELOOP)) {
            if (std::holds_alternative<std::string>(
                    away.take(root, walked, "in the place of a kept directory"))) {
                return {};
            }
        }
        if (!next) {
            if (::mkdirat(at.get(), name.c_str(), 0755) != 0 && errno != EEXIST) return {};
            if (::geteuid() == 0 && ::fchownat(at.get(), name.c_str(), root_st.st_uid,
                                               root_st.st_gid, AT_SYMLINK_NOFOLLOW) != 0) {
                return {};
            }
            next.reset(
                ::openat(at.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!next) return {};
        }
        at = std::move(next);
    }
    return at;
}

}  // namespace

kept_copies::kept_copies() = default;
kept_copies::~kept_copies() = default;
kept_copies::kept_copies(kept_copies&&) noexcept = default;
kept_copies& kept_copies::operator=(kept_copies&&) noexcept = default;

kept_copies kept_copies::take(std::span<const fs::path> paths, std::span<const fs::path> roots,
                              std::span<const earlier_run> earlier) {
    kept_copies out;
    budget left;
    for (const fs::path& path : paths) {
        const auto root = std::find_if(roots.begin(), roots.end(), [&path](const fs::path& r) {
            return is_within(path, r) && path != r;
        });
        if (root == roots.end()) continue;
        const auto within = [&path](const std::vector<fs::path>& places) {
            return std::any_of(places.begin(), places.end(),
                               [&path](const fs::path& place) { return is_within(path, place); });
        };
        // The earliest run still going that may have written here.
        const auto writer = std::find_if(
            earlier.begin(), earlier.end(),
            [&](const earlier_run& run) { return within(run.roots) && !within(run.kept); });
        if (writer != earlier.end()) {
            const kept* copied = nullptr;
            if (writer->copies != nullptr) {
                for (const kept& k : writer->copies->kept_) {
                    if (k.path == path) copied = &k;
                }
            }
            if (copied != nullptr) {
                out.kept_.push_back({*root, path, copied->copy});
            } else {
                out.unkept_.push_back(path);
            }
            continue;
        }
        unique_fd parent = open_parent_no_symlinks(path);
        budget attempt = left;
        auto copied =
            parent ? copy_of(parent.get(), path.filename().string(), attempt) : std::nullopt;
        if (!copied) {
            out.unkept_.push_back(path);  // missing, or too large: judged instead
            continue;
        }
        left = attempt;
        out.kept_.push_back({*root, path, std::make_shared<const node>(std::move(*copied))});
    }
    return out;
}

namespace {

void write_node(std::string& out, const kept_copies::node& n, const std::string& at) {
    append_field(out, "node", at);
    append_field(out, "mode", std::to_string(n.mode));
    append_field(out, "uid", std::to_string(n.uid));
    append_field(out, "gid", std::to_string(n.gid));
    append_field(out, "links", std::to_string(n.links));
    append_field(out, "children", std::to_string(n.children.size()));
    append_field(out, "content", n.content);
    for (const kept_copies::node& child : n.children)
        write_node(out, child, at.empty() ? child.name : at + "/" + child.name);
}

template <typename Number>
bool read_number(std::string_view text, Number& out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string kept_copies::text() const {
    std::string out;
    for (const kept& k : kept_) {
        append_field(out, "copy", k.path.native());
        append_field(out, "root", k.root.native());
        write_node(out, *k.copy, "");
    }
    for (const fs::path& path : unkept_)
        append_field(out, "unkept", path.native());
    return out;
}

std::optional<kept_copies> kept_copies::parse(std::string_view text) {
    const auto fields = split_fields(text);
    if (!fields) return std::nullopt;
    kept_copies out;
    const auto absolute = [](std::string_view value) -> std::optional<fs::path> {
        fs::path path{std::string(value)};
        if (!path.is_absolute() || path.lexically_normal() != path) return std::nullopt;
        return path;
    };
    for (std::size_t i = 0; i < fields->size();) {
        const auto [tag, value] = (*fields)[i];
        if (tag == "unkept") {
            auto path = absolute(value);
            if (!path) return std::nullopt;
            out.unkept_.push_back(std::move(*path));
            ++i;
            continue;
        }
        if (tag != "copy" || i + 1 >= fields->size() || (*fields)[i + 1].first != "root") {
            return std::nullopt;
        }
        auto path = absolute(value);
        auto root = absolute((*fields)[i + 1].second);
        if (!path || !root || !is_within(*path, *root) || *path == *root) return std::nullopt;
        i += 2;
        // The nodes, each after its parent: "" is the copied path itself. A parent holds room
        // for the children it says it has, so that the places of those added stay put.
        node top;
        struct place {
            node* at;
            std::size_t room;  // the children it said it has
        };
        std::map<std::string, place, std::less<>> at;
        bool first = true;
        std::size_t entries = 0;
        while (i + 7 <= fields->size() && (*fields)[i].first == "node") {
            const std::string_view where = (*fields)[i].second;
            node n;
            std::size_t children = 0;
            if ((*fields)[i + 1].first != "mode" || (*fields)[i + 2].first != "uid" ||
                (*fields)[i + 3].first != "gid" || (*fields)[i + 4].first != "links" ||
                (*fields)[i + 5].first != "children" || (*fields)[i + 6].first != "content" ||
                !read_number((*fields)[i + 1].second, n.mode) ||
                !read_number((*fields)[i + 2].second, n.uid) ||
                !read_number((*fields)[i + 3].second, n.gid) ||
                !read_number((*fields)[i + 4].second, n.links) ||
                !read_number((*fields)[i + 5].second, children) || ++entries > entry_limit ||
                children > entry_limit || (children > 0 && !S_ISDIR(n.mode))) {
                return std::nullopt;
            }
            n.content = std::string((*fields)[i + 6].second);
            n.children.reserve(children);
            i += 7;
            node* added = nullptr;
            if (first) {
                if (!where.empty()) return std::nullopt;
                n.name = path->filename().string();
                top = std::move(n);
                added = &top;
                first = false;
            } else {
                const std::size_t slash = where.rfind('/');
                const std::string_view parent =
                    slash == std::string_view::npos ? "" : where.substr(0, slash);
                const std::string_view name =
                    slash == std::string_view::npos ? where : where.substr(slash + 1);
                const auto found = at.find(parent);
                if (name.empty() || name == "." || name == ".." ||
                    name.find('\0') != std::string_view::npos || found == at.end() ||
                    found->second.at->children.size() >= found->second.room || at.contains(where)) {
                    return std::nullopt;
                }
                n.name = std::string(name);
                added = &found->second.at->children.emplace_back(std::move(n));
            }
            at.emplace(std::string(where), place{added, children});
        }
        if (first) return std::nullopt;
        out.kept_.push_back(
            {std::move(*root), std::move(*path), std::make_shared<const node>(std::move(top))});
    }
    return out;
}

std::vector<fs::path> kept_copies::covered() const {
    std::vector<fs::path> out;
    out.reserve(kept_.size());
    for (const kept& k : kept_)
        out.push_back(k.path);
    return out;
}

std::vector<neutralized_path> kept_copies::restore(quarantine& away) const {
    std::vector<neutralized_path> out;
    for (const kept& k : kept_) {
        {
            unique_fd parent = open_parent_no_symlinks(k.path);
            if (parent && same(parent.get(), *k.copy)) continue;
        }
        const std::string why =
            "a protected path, changed by the run: put back as it was before it";
        std::string kept_at;
        struct stat st {};
        if (::lstat(k.path.c_str(), &st) == 0) {
            auto taken = away.take(k.root, k.path, why);
            if (auto* failed = std::get_if<std::string>(&taken)) {
                out.push_back(
                    {k.path.string(), why + " (" + *failed + ")", neutral_action::failed, {}});
                continue;
            }
            kept_at = std::get<quarantine::taken>(taken).kept_at;
        }
        unique_fd parent = reopen_directory(k.root, k.path.parent_path(), away);
        if (!parent || !write_back(parent.get(), *k.copy)) {
            out.push_back({k.path.string(),
                           why + " (cannot write it back: " + std::strerror(errno) + ")",
                           neutral_action::failed, std::move(kept_at)});
            continue;
        }
        out.push_back({k.path.string(), why, neutral_action::restored, std::move(kept_at)});
    }
    return out;
}

}  // namespace cordon::sandbox
