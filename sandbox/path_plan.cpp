// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// See path_plan.hpp.
//
// Longer than the ~500 lines a file here stays under: one planner walks each root once and finds,
// in the same walk, the protected names, the git directories (commondir, worktrees, modules,
// hooksPath) and the masks; the walk's state is what they share.
#include "sandbox/path_plan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <system_error>

#include "sandbox/git_config.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/mount_exposure.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/quarantine.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// What git reads of a configuration: more is no file a person wrote (git reads any size: a larger
// one makes the plan refuse, read_git_reach_at).
constexpr std::size_t git_config_limit = std::size_t{1} << 20;
constexpr int deepest_include = 10;
constexpr int deepest_module = 32;

std::size_t depth(const fs::path& path) {
    return static_cast<std::size_t>(std::distance(path.begin(), path.end()));
}

void add_unique(std::vector<fs::path>& to, const fs::path& path) {
    if (std::find(to.begin(), to.end(), path) == to.end()) to.push_back(path);
}

// The text of a file a command may have planted or swapped (a `.git` file, a commondir, a
// configuration): a regular file only, never through a symlink on the way, bounded.
std::optional<std::string> read_planted(const fs::path& path, std::size_t limit) {
    unique_fd dir = open_parent_no_symlinks(path);
    if (!dir) return std::nullopt;
    return read_regular_file(dir.get(), path.filename().string(), limit);
}

class planner {
public:
    planner(const sandbox_policy& policy, path_plan& out)
        : out_(out),
          carve_outs_(policy.rules.read_only),
          host_tmp_(policy.rules.tmp == tmp_policy::host) {
        for (const std::string& name : policy.rules.protect) {
            if (name == path_directories || home_anchored(name)) {
                anchored_.push_back(name);
            } else {
                names_.push_back(name);
            }
        }
        for (const std::string& name : names_) {
            // ".git/hooks" -> "hooks": what every git directory keeps.
            if (name.rfind(".git/", 0) == 0 && name.find('/', 5) == std::string::npos) {
                git_names_.push_back(name.substr(5));
            }
        }
        home_ = invoking_home();
    }

    void protect_root(const fs::path& root) {
        // A writable root that is a git directory itself: a bare repository that `git push` to
        // it runs the hooks of.
        if (is_git_directory(root)) protect_git_directory(root, root, git_names_, true);
        for (const std::string& name : names_) {
            const fs::path path = root / name;
            // A writable root of its own (`--writable-root ws/.vscode`) was named on purpose: it
            // is written as given, as one deeper in the tree is, not kept read-only by the root
            // that holds it. What it holds is kept as in any root.
            if (std::find(out_.writable_roots.begin(), out_.writable_roots.end(), path) !=
                out_.writable_roots.end()) {
                continue;
            }
            protect_existing(root, path, name);
        }
        struct stat st {};
        const fs::path git = root / ".git";
        if (::lstat(git.c_str(), &st) != 0) return;
        if (S_ISDIR(st.st_mode)) {
            protect_git_directory(root, git, git_names_, true);
        } else if (S_ISREG(st.st_mode)) {
            follow_git_file(git);
        }
    }

    // Where the user's own git configuration sends git for every repository: its
    // core.hooksPath and the files it includes, wherever they lie in a writable root.
    void protect_user_configuration() {
        if (git_names_.empty()) return;
        protect_settings(user_git_reach(home_), std::nullopt);
    }

    // Why the run cannot be planned: a git configuration cordon cannot read as git would.
    [[nodiscard]] const std::optional<std::string>& refused() const { return refused_; }

    // The names anchored to the homes (`~/.ssh`) in each home that lies in a writable root (or
    // holds one), and the directories on cordon's PATH in such a home: kept where they exist,
    // judged where a run makes them (path_plan::places). What `cordon run` can show the host's next
    // login, shell or python is not only the workspace's business when the workspace is, or holds,
    // a home.
    void protect_homes() {
        if (anchored_.empty()) return;
        std::vector<fs::path> homes;
        for (fs::path& home : protected_homes()) {
            // Only a home that lies in a root, or holds one, can have a place in one.
            if (std::any_of(out_.writable_roots.begin(), out_.writable_roots.end(),
                            [&home](const fs::path& root) {
                                return is_within(home, root) || is_within(root, home);
                            })) {
                homes.push_back(std::move(home));
            }
        }
        for (const std::string& name : anchored_) {
            if (name == path_directories) {
                // Those in a home that lies in a writable root: a project's own (an activated
                // virtualenv's bin, a node_modules/.bin in a workspace of ~/proj) is the
                // project's code, which its package managers write.
                for (const fs::path& dir : path_entries()) {
                    const fs::path resolved = canonical_path(dir);
                    if (std::any_of(homes.begin(), homes.end(), [&](const fs::path& home) {
                            return is_within(resolved, home) && root_of(home);
                        })) {
                        protect_place(dir, name);
                    }
                }
                continue;
            }
            const std::string_view rest = *home_anchored(name);
            for (const fs::path& home : homes)
                protect_place(home / std::string(rest), name);
        }
    }

    // What a run makes where a hidden store is missing in a writable root (a link a host tool
    // would write the secret through) is judged and taken. (The carve-outs and the stores that
    // exist there are kept by their place in finish().)
    void place_missing_stores() {
        for (const fs::path& missing : out_.hidden_missing) {
            if (root_of(missing)) out_.places.push_back({missing, std::string(hidden_store_place)});
        }
    }

    void finish() {
        // Every kept path is pinned from the outermost place the run may write that holds it
        // (a root holding the root it was found in, the host's /tmp under `--tmp host`): a rename
        // of a directory above the inner root moves the kept paths away with their mounts, and
        // what the run puts under the old names was never judged (kept paths are not). So are a
        // carve-out and a hidden credential store in a root, as a protected name is: no rename
        // swaps another directory in under the same name (`mv vendor away; mkdir vendor` would
        // leave the carve-out's name writable, and a store renamed with its directory would be
        // readable where it went in the next run).
        std::vector<fs::path> grants = out_.writable_roots;
        if (host_tmp_) grants.push_back(canonical_path("/tmp"));
        std::vector<fs::path> kept = out_.read_only;
        kept.insert(kept.end(), carve_outs_.begin(), carve_outs_.end());
        kept.insert(kept.end(), out_.entries.begin(), out_.entries.end());
        for (const hidden_path& store : out_.hidden) {
            if (root_of(store.path)) kept.push_back(store.path);
        }
        for (const fs::path& path : kept) {
            const fs::path* outermost = nullptr;
            for (const fs::path& grant : grants) {
                if (is_within(path, grant) && path != grant &&
                    (outermost == nullptr || is_within(*outermost, grant))) {
                    outermost = &grant;
                }
            }
            if (outermost != nullptr) keep_ancestors(*outermost, path);
        }
        // Parents before what lies inside them: a mount made later covers one made earlier.
        for (auto* list : {&out_.entries, &out_.read_only}) {
            std::stable_sort(list->begin(), list->end(), [](const fs::path& a, const fs::path& b) {
                return depth(a) < depth(b);
            });
        }
        // A protected name kept in place (it holds another kept path) is not also bound read-only
        // over itself; a carve-out the user gave stays read-only whatever it holds.
        std::erase_if(out_.read_only, [this](const fs::path& path) {
            return std::find(out_.entries.begin(), out_.entries.end(), path) !=
                       out_.entries.end() &&
                   std::find(carve_outs_.begin(), carve_outs_.end(), path) == carve_outs_.end();
        });
    }

private:
    [[nodiscard]] std::optional<fs::path> root_of(const fs::path& path) const {
        for (const fs::path& root : out_.writable_roots) {
            if (is_within(path, root)) return root;
        }
        return std::nullopt;
    }

    [[nodiscard]] bool has_deeper_name(const std::string& prefix) const {
        return std::any_of(names_.begin(), names_.end(), [&prefix](const std::string& name) {
            return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
                   name[prefix.size()] == '/';
        });
    }

    // `path` (`name` relative to where it was looked for) is kept when it exists and is no
    // symlink (a bind follows a link: a symlinked one is judged instead). What a symlink leads to
    // in a writable root is kept: the tool that reads the name reads it.
    void protect_existing(const fs::path& root, const fs::path& path, const std::string& name) {
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) return;
        if (S_ISLNK(st.st_mode)) {
            protect_elsewhere(canonical_path(path), false);
            return;
        }
        // Beneath a symlink on the way: the bind would land elsewhere.
        if (canonical_path(path.parent_path()) != path.parent_path()) return;
        keep_ancestors(root, path);
        ++out_.protected_count;
        if (S_ISDIR(st.st_mode) && has_deeper_name(name)) {
            add_unique(out_.entries, path);
        } else {
            add_unique(out_.read_only, path);
        }
    }

    // Every directory strictly between `root` and `path` is kept in place.
    void keep_ancestors(const fs::path& root, const fs::path& path) {
        fs::path at = root;
        const fs::path relative = path.lexically_relative(root);
        auto part = relative.begin();
        if (part == relative.end()) return;
        for (auto next = std::next(part); next != relative.end(); ++part, ++next) {
            at /= *part;
            add_unique(out_.entries, at);
        }
    }

    // The protected git names among `names` in the git directory `dir`, and what it obeys
    // beyond them: its submodules' and worktrees' git directories, where its hooks lead.
    void protect_git_directory(const fs::path& root, const fs::path& dir,
                               const std::vector<std::string>& names, bool whole) {
        for (const std::string& name : names) {
            if (std::find(git_names_.begin(), git_names_.end(), name) == git_names_.end()) continue;
            protect_existing(root, dir / name, ".git/" + name);
        }
        if (!whole) return;
        const bool hooks =
            std::find(git_names_.begin(), git_names_.end(), "hooks") != git_names_.end();
        if (hooks) {
            protect_hook_targets(dir / "hooks");
            git_reach settings;
            read_git_reach(dir / "config", home_, settings);
            read_git_reach(dir / "config.worktree", home_, settings);
            protect_settings(settings, dir);
        }
        walk_modules(root, dir / "modules", 0);
        std::error_code ec;
        for (fs::directory_iterator it(dir / "worktrees", ec);
             !ec && it != fs::directory_iterator(); it.increment(ec)) {
            std::error_code type_ec;
            if (it->is_symlink(type_ec) || !it->is_directory(type_ec)) continue;
            // A linked worktree reads its hooks and config from the common directory; what it
            // reads from its own is where that is and its config.worktree.
            protect_git_directory(root, it->path(), {"commondir", "config.worktree"}, false);
        }
    }

    // `.git/modules` holds a git directory per submodule, at the submodule's name (which may
    // have slashes), each with a `modules` of its own.
    void walk_modules(const fs::path& root, const fs::path& dir, int level) {
        if (level > deepest_module) return;
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
             it.increment(ec)) {
            std::error_code type_ec;
            if (it->is_symlink(type_ec) || !it->is_directory(type_ec)) continue;
            if (is_git_directory(it->path())) {
                protect_git_directory(root, it->path(), git_names_, false);
                protect_hook_targets(it->path() / "hooks");
                walk_modules(root, it->path() / "modules", level + 1);
            } else {
                walk_modules(root, it->path(), level + 1);
            }
        }
    }

    // A `.git` file ("gitdir: PATH": a linked worktree, a submodule, a separate git directory)
    // leads to the git directory git uses there, and that one's commondir to where its hooks and
    // config are: those in a writable root are kept as a `.git` directory's are. One that leads
    // nowhere is followed no further.
    //
    // Both files are read as git reads them (git_config::gitfile_target, commondir_target): the
    // whole file, not its first line, and no blank trimmed but the line ends at its end.
    void follow_git_file(const fs::path& file) {
        const auto text = read_planted(file, git_config::gitfile_limit);
        const auto target = text ? git_config::gitfile_target(*text) : std::nullopt;
        if (!target) return;
        fs::path git = *target;
        if (git.is_relative()) git = file.parent_path() / git;
        git = canonical_path(git);
        for (int hop = 0; hop < 2; ++hop) {
            if (!is_git_directory(git)) return;
            if (auto root = root_of(git)) protect_git_directory(*root, git, git_names_, true);
            const auto where = read_planted(git / "commondir", git_config::gitfile_limit);
            if (!where) return;
            fs::path next = git_config::commondir_target(*where);
            if (next.is_relative()) next = git / next;
            next = canonical_path(next);
            if (next == git) return;
            git = next;
        }
    }

    // A hook may be a symlink into the work tree (hooks kept under version control): what it
    // leads to is a hook all the same.
    void protect_hook_targets(const fs::path& hooks) {
        std::error_code ec;
        for (fs::directory_iterator it(hooks, ec); !ec && it != fs::directory_iterator();
             it.increment(ec)) {
            std::error_code type_ec;
            if (!it->is_symlink(type_ec)) continue;
            protect_elsewhere(canonical_path(it->path()), false);
        }
    }

    // core.hooksPath and the included files of a configuration (`git`: the repository's git
    // directory, for a relative hooksPath; nullopt for the user's own configuration, where a
    // relative hooksPath means each repository's own work tree).
    //
    // A relative hooksPath is relative to where git runs hooks: the work tree's top, or the git
    // directory of a bare repository. Which work tree a repository's configuration serves is not
    // only the git directory's parent (a submodule's git directory in .git/modules, a linked
    // worktree, core.worktree): it is taken against that parent, the git directory, and the top
    // of every writable root, which is wider than git and never narrower where it matters.
    void protect_settings(const git_reach& settings, const std::optional<fs::path>& git) {
        if (!settings.unreadable.empty() && !refused_) {
            refused_ = "refusing to plan the run: cordon cannot read the git configuration " +
                       settings.unreadable.front().string() +
                       " (larger than 1 MiB, or not a regular file), so where it sends git's "
                       "hooks is not known";
        }
        for (const fs::path& included : settings.includes)
            protect_elsewhere(included, true);
        for (const std::string& hooks_path : settings.hooks_paths) {
            if (hooks_path.empty()) continue;
            const fs::path path = hooks_path;
            if (path.is_absolute()) {
                protect_elsewhere(canonical_path(path), false, true);
                continue;
            }
            for (const fs::path& root : out_.writable_roots)
                protect_elsewhere(canonical_path(root / path), false, true);
            if (git) {
                protect_elsewhere(canonical_path(git->parent_path() / path), false, true);
                protect_elsewhere(canonical_path(*git / path), false, true);
            }
        }
    }

    // `path` (canonical) is kept read-only when it exists in a writable root; missing, it is
    // judged if a run makes it: as a configuration (`configuration`) or a hooks directory
    // (`hooks`).
    void protect_elsewhere(const fs::path& path, bool configuration, bool hooks = false) {
        const std::optional<fs::path> root = root_of(path);
        if (!root || path == *root) return;
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) {
            keep_ancestors(*root, path);
            ++out_.protected_count;
            add_unique(out_.read_only, path);
            return;
        }
        if (configuration) add_unique(out_.configurations, path);
        if (hooks) add_unique(out_.hook_directories, path);
    }

    // The absolute directories on cordon's PATH; a relative entry (`.`, an empty one) names
    // wherever the shell happens to be, which no place can keep (docs/sandbox.md).
    static std::vector<fs::path> path_entries() {
        std::vector<fs::path> out;
        const char* list = std::getenv("PATH");
        for (std::string_view rest = list != nullptr ? list : ""; !rest.empty();) {
            const std::size_t end = std::min(rest.find(':'), rest.size());
            const std::string_view entry = rest.substr(0, end);
            // As written: protect_place() resolves its directory as the kernel does (a `..` after
            // a link is the link target's parent, which no lexical rule knows), and takes one
            // that ends in `/`, `/.` or `/..` where it leads.
            if (!entry.empty() && entry.front() == '/') out.emplace_back(std::string(entry));
            rest.remove_prefix(std::min(end + 1, rest.size()));
        }
        return out;
    }

    // `path` under the protected name `name`: the entry itself (its directory resolved, so that
    // a link on the way is no way around it) and, when it is a link, what it leads to, each in a
    // writable root but no root itself (a root was named on purpose, and is written as given).
    void protect_place(const fs::path& path, const std::string& name) {
        // A place is an entry of a directory: `/`, or a path whose last part is `.` or `..`
        // (a `..` after a link), is taken where it leads.
        const std::string last = path.filename().string();
        if (last.empty() || last == "." || last == "..") {
            if (path != path.root_path()) protect_place(canonical_path(path), name);
            return;
        }
        // Most names share a few directories (`~/.config`, `~/.local/share`): each is resolved
        // once, and an entry only when it is a link.
        auto [parent, fresh] = resolved_.try_emplace(path.parent_path().native());
        if (fresh) parent->second = canonical_path(path.parent_path());
        const fs::path entry = parent->second / path.filename();
        struct stat st {};
        const bool link = ::lstat(entry.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
        const fs::path target = link ? canonical_path(entry) : entry;
        bool kept = false;  // protect_existing() keeps what a link leads to too
        for (const fs::path& place : {entry, target}) {
            // A place that is a writable root, or holds one, was named on purpose (or is the
            // workspace's parent, on PATH): it is written as given.
            const std::optional<fs::path> root = root_of(place);
            if (!root ||
                std::any_of(out_.writable_roots.begin(), out_.writable_roots.end(),
                            [&place](const fs::path& r) { return is_within(r, place); }) ||
                !placed_.insert(place.native()).second) {
                continue;
            }
            out_.places.push_back({place, name});
            if (!kept) protect_existing(*root, place, name);
            kept = true;
        }
    }

    path_plan& out_;
    std::optional<std::string> refused_;
    std::vector<fs::path> carve_outs_;          // --read-only-path, as the user gave them
    std::vector<std::string> names_;            // looked for at every depth
    std::vector<std::string> anchored_;         // `~/` names and `$PATH`
    bool host_tmp_ = false;                     // the host's /tmp is writable (`--tmp host`)
    std::map<std::string, fs::path> resolved_;  // protect_place()'s directories, resolved
    std::set<std::string> placed_;              // out_.places, by path: a /home of many accounts
    std::vector<std::string> git_names_;
    fs::path home_;
};

// A denied path is denied under every name a mount gives it: a bind mount of the home at
// /mnt/home shows ~/.aws there too, and on the Landlock rung the read grant /mnt/home's entry
// would get is a grant of the home's own directory and everything beneath it, ~/.aws included. A
// missing one is denied under each name of the directory it would appear in.
std::optional<std::string> hide_other_names(path_plan& out, mount_snapshot& snapshot) {
    if (out.hidden.empty() && out.hidden_missing.empty()) return std::nullopt;
    const auto& mounts = snapshot.table();
    if (const auto* reason = std::get_if<std::string>(&mounts)) {
        return "cannot tell where else the denied reads are mounted: " + *reason;
    }
    const auto& table = std::get<std::vector<mount_entry>>(mounts);
    // Only a filesystem mounted more than once has other names.
    std::map<std::string, int> mounted;
    for (const mount_entry& mount : table)
        ++mounted[mount.device];
    if (std::none_of(mounted.begin(), mounted.end(), [](const auto& m) { return m.second > 1; }))
        return std::nullopt;
    std::vector<hidden_path> more;
    for (const hidden_path& hidden : out.hidden) {
        for (fs::path& alias : other_names(hidden.path, table))
            more.push_back({std::move(alias), hidden.directory});
    }
    std::vector<fs::path> more_missing;
    for (const fs::path& missing : out.hidden_missing) {
        fs::path existing = missing.parent_path();
        while (existing != existing.root_path() && ::access(existing.c_str(), F_OK) != 0)
            existing = existing.parent_path();
        const fs::path rest = missing.lexically_relative(existing);
        for (const fs::path& alias : other_names(existing, table))
            more_missing.push_back(alias / rest);
    }
    for (hidden_path& alias : more) {
        if (std::none_of(out.hidden.begin(), out.hidden.end(),
                         [&alias](const hidden_path& h) { return h.path == alias.path; })) {
            out.hidden.push_back(std::move(alias));
        }
    }
    for (fs::path& alias : more_missing)
        add_unique(out.hidden_missing, std::move(alias));
    return std::nullopt;
}

// The first `most` names in the directory open as `dir`, without "." and "..": a denied directory a
// run could fill is not listed whole.
std::vector<std::string> first_names(int dir, std::size_t most) {
    std::vector<std::string> out;
    const int copy = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return out;
    DIR* listing = ::fdopendir(copy);
    if (listing == nullptr) {
        ::close(copy);
        return out;
    }
    while (out.size() < most) {
        const dirent* entry = ::readdir(listing);
        if (entry == nullptr) break;
        const std::string_view name = entry->d_name;
        if (name != "." && name != "..") out.emplace_back(name);
    }
    ::closedir(listing);
    return out;
}

// The denied files that have other names (a hard link the user, or anything unconfined, made): a
// denied path is hidden by its path, and a name elsewhere reads the file (docs/sandbox.md, "What
// remains"). The denied files themselves and the files directly in a denied directory are looked
// at, a few dozen entries of each: a run's record names them, as no rung can find the other names.
void find_denied_files_of_several_names(path_plan& out, const std::vector<fs::path>& allowed) {
    constexpr std::size_t entries_per_directory = 64;
    const auto readable = [&allowed](const fs::path& path) {
        return std::any_of(allowed.begin(), allowed.end(),
                           [&path](const fs::path& a) { return is_within(path, a); });
    };
    for (const hidden_path& hidden : out.hidden) {
        if (!hidden.directory) {
            struct stat st {};
            if (::lstat(hidden.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1 &&
                !readable(hidden.path)) {
                add_unique(out.several_names, hidden.path);
            }
            continue;
        }
        const unique_fd dir(
            ::open(hidden.path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!dir) continue;
        for (const std::string& name : first_names(dir.get(), entries_per_directory)) {
            struct stat st {};
            if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(st.st_mode) && st.st_nlink > 1) {
                fs::path file = hidden.path / name;
                if (!readable(file)) add_unique(out.several_names, std::move(file));
            }
        }
    }
    std::sort(out.several_names.begin(), out.several_names.end());
}

// What a symlink directly in a denied directory leads to (a store kept elsewhere: sops-nix's and
// agenix's /run/secrets, a key on another disk) is hidden too: the Landlock rung would read it
// through the link (a grant is on what a path lands on), and every rung by its own name. Not a
// place that is, or holds, one of the system's top directories, a home or the run's own roots (a
// link to /usr/bin among a tool's files, or to ~): hiding it would hide what every command needs.
// The first entries of each directory, and at most so many places for each and in all: links a
// run could make in a store it may write (one in its workspace, with --accept-partial on the
// Landlock rung) neither push later runs past the paths a run may deny nor use up another
// directory's places. The places left are named (links_left). What --allow-read lets through is
// not hidden.
void hide_link_targets(path_plan& out, const std::vector<fs::path>& own_roots,
                       const std::vector<fs::path>& allowed) {
    constexpr std::size_t entries_per_directory = 256;
    constexpr std::size_t places_per_directory = 8;
    constexpr std::size_t most_places = 48;
    static constexpr std::array<std::string_view, 23> system{
        "/bin",    "/boot",  "/dev", "/etc", "/home", "/lib",  "/lib32", "/lib64",
        "/libx32", "/media", "/mnt", "/nix", "/opt",  "/proc", "/root",  "/run",
        "/sbin",   "/snap",  "/srv", "/sys", "/tmp",  "/usr",  "/var"};
    // Nor anything in these, the system's programs, libraries and configuration (a link to libc
    // planted in a store a run could write would stop every later run), nor in the run's roots
    // (their keys are the run's own, and a denied path there is one the Landlock rung refuses).
    static constexpr std::array<std::string_view, 13> system_files{
        "/bin",    "/boot",      "/dev",  "/etc",  "/lib", "/lib32", "/lib64",
        "/libx32", "/nix/store", "/proc", "/sbin", "/sys", "/usr"};
    // Made at the first link: most denied directories hold none.
    std::vector<fs::path> kept;
    const auto never_hidden = [&]() -> const std::vector<fs::path>& {
        if (kept.empty()) {
            kept = credential_homes();
            kept.insert(kept.end(), own_roots.begin(), own_roots.end());
            for (std::string_view place : system)
                kept.emplace_back(place);
        }
        return kept;
    };
    std::vector<hidden_path> more;
    std::size_t places = 0;
    for (const hidden_path& hidden : out.hidden) {
        if (!hidden.directory) continue;
        const unique_fd dir(
            ::open(hidden.path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!dir) continue;
        std::size_t here = 0;
        for (const std::string& name : first_names(dir.get(), entries_per_directory)) {
            struct stat st {};
            if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                !S_ISLNK(st.st_mode)) {
                continue;
            }
            const fs::path target = canonical_path(hidden.path / name);
            const auto hides = [&target](const hidden_path& h) {
                return is_within(target, h.path);
            };
            const std::vector<fs::path>& never = never_hidden();
            if (std::any_of(system_files.begin(), system_files.end(),
                            [&target](std::string_view place) {
                                return is_within(target, fs::path(place));
                            }) ||
                std::any_of(own_roots.begin(), own_roots.end(),
                            [&target](const fs::path& root) { return is_within(target, root); }) ||
                std::any_of(out.hidden.begin(), out.hidden.end(), hides) ||
                std::any_of(more.begin(), more.end(), hides) ||
                std::any_of(
                    never.begin(), never.end(),
                    [&target](const fs::path& place) { return is_within(place, target); }) ||
                std::any_of(allowed.begin(), allowed.end(), [&target](const fs::path& place) {
                    return is_within(target, place);
                })) {
                continue;
            }
            if (++here > places_per_directory || ++places > most_places) {
                add_unique(out.links_left, target);
                continue;
            }
            if (::stat(target.c_str(), &st) != 0) {
                add_unique(out.hidden_missing, target);
            } else {
                more.push_back({target, S_ISDIR(st.st_mode)});
            }
        }
    }
    out.hidden.insert(out.hidden.end(), more.begin(), more.end());
}

std::optional<std::string> plan_hidden(const sandbox_policy& policy, path_plan& out,
                                       mount_snapshot& mounts) {
    const path_rules& rules = policy.rules;
    // Files found in the homes by their content stay readable in the run's own roots.
    std::vector<fs::path> own_roots = writable_roots(policy);
    if (!policy.workspace_root.empty()) own_roots.push_back(canonical_path(policy.workspace_root));
    for (const fs::path& denied : effective_deny_read(rules, own_roots, &out.found_left)) {
        if (!denied.is_absolute()) return "--deny-read needs an absolute path: " + denied.string();
        // Where a read of it would land: through every link, a dangling one to its target, and a
        // trailing "/" or "/." spelling the same file.
        const fs::path target = canonical_path(denied);
        // Every rung would hide the command's own program with it (bwrap fails to start, and the
        // Landlock rung's walk has no entry to leave out): refused, whatever spelling or link
        // led there.
        if (target == target.root_path()) {
            return "--deny-read " + denied.string() +
                   " would hide every file, the command's own program too: deny the "
                   "directories you mean";
        }
        struct stat st {};
        if (::stat(target.c_str(), &st) != 0) {
            // Not there yet: kept unreadable should it appear (a first `aws configure` on the host
            // while a job runs, or the target of a link that leads nowhere yet), where Landlock
            // can.
            add_unique(out.hidden_missing, target);
            continue;
        }
        if (std::none_of(out.hidden.begin(), out.hidden.end(),
                         [&target](const hidden_path& h) { return h.path == target; })) {
            out.hidden.push_back({target, S_ISDIR(st.st_mode)});
        }
    }
    std::vector<fs::path> let_through;  // allow_read, canonical
    for (const fs::path& path : rules.allow_read) {
        if (path.is_absolute()) let_through.push_back(canonical_path(path));
    }
    hide_link_targets(out, own_roots, let_through);
    if (auto failed = hide_other_names(out, mounts)) return failed;
    for (const fs::path& allowed : rules.allow_read) {
        if (!allowed.is_absolute())
            return "--allow-read needs an absolute path: " + allowed.string();
        struct stat st {};
        if (::stat(allowed.c_str(), &st) != 0) continue;
        const fs::path target = canonical_path(allowed);
        for (const hidden_path& h : out.hidden) {
            if (h.directory && target != h.path && is_within(target, h.path)) {
                add_unique(out.exposed, target);
            }
        }
        std::erase_if(out.hidden_missing,
                      [&target](const fs::path& missing) { return is_within(missing, target); });
    }
    find_denied_files_of_several_names(out, let_through);
    // The Landlock rung's walk (in the launcher inside bwrap too) takes a bounded list.
    if (out.hidden.size() + out.hidden_missing.size() > landlock::max_denied_reads) {
        return "too many denied reads: " +
               std::to_string(out.hidden.size() + out.hidden_missing.size()) + " paths (at most " +
               std::to_string(landlock::max_denied_reads) +
               ", the credential stores of each home among them)";
    }
    return std::nullopt;
}

// The git directory `root` lies strictly inside, if any: its hooks or configuration would be
// writable, and what is written there runs outside the sandbox.
std::optional<fs::path> inside_git_directory(const fs::path& root) {
    for (fs::path at = root.parent_path(); at.has_relative_path(); at = at.parent_path()) {
        if (is_git_directory(at)) return at;
    }
    return std::nullopt;
}

}  // namespace

namespace {

// `file` as git names it (`named`: a relative include is relative to where that name lies, links
// and all), read through its canonical path.
// Each file is read once (`seen`): every value it sets is counted the first time.
void read_git_reach_at(const fs::path& named, const fs::path& home, git_reach& out,
                       std::set<fs::path>& seen, int level) {
    if (level > deepest_include) return;
    const fs::path file = canonical_path(named);
    if (!seen.insert(file).second) return;
    struct stat st {};
    // git reads no file that is not there, and a directory as an empty one.
    if (::stat(file.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return;
    const auto content = read_planted(file, git_config_limit);
    if (!content) {
        // A regular file larger than cordon reads, a FIFO, a directory: git would read the first
        // (or hang on the second, or refuse the third); what it says is not known.
        add_unique(out.unreadable, file);
        return;
    }
    for (const auto inside : {git_config::whitespace::kept, git_config::whitespace::spaces}) {
        const auto parsed = git_config::parse(*content, inside);
        const auto* entries = std::get_if<std::vector<git_config::entry>>(&parsed);
        if (entries == nullptr) continue;  // git refuses to run beside it
        for (const git_config::entry& e : *entries) {
            if (!e.value) continue;  // git refuses a hooksPath or path that is only a name
            if (e.section == "core" && !e.has_subsection && e.name == "hookspath") {
                for (std::string& path : git_config::expanded_paths(*e.value, home.native())) {
                    if (std::find(out.hooks_paths.begin(), out.hooks_paths.end(), path) ==
                        out.hooks_paths.end()) {
                        out.hooks_paths.push_back(std::move(path));
                    }
                }
            } else if ((e.section == "include" || e.section == "includeif") && e.name == "path" &&
                       !e.value->empty()) {
                for (const std::string& path :
                     git_config::expanded_paths(*e.value, home.native())) {
                    fs::path included = path;
                    if (included.is_relative()) included = named.parent_path() / included;
                    included = included.lexically_normal();
                    // The name as written may be a link in a writable root: judged where a run
                    // points it elsewhere (the planner keeps what it leads to).
                    add_unique(out.includes, included);
                    add_unique(out.includes, canonical_path(included));
                    read_git_reach_at(included, home, out, seen, level + 1);
                }
            }
        }
    }
}

}  // namespace

void read_git_reach(const fs::path& file, const fs::path& home, git_reach& out) {
    std::set<fs::path> seen;
    read_git_reach_at(file, home, out, seen, 0);
}

std::vector<fs::path> user_git_configurations(const fs::path& home) {
    std::vector<fs::path> out;
    const auto from_environment = [&out](const char* name) {
        const char* value = std::getenv(name);
        if (value != nullptr && *value != '\0') add_unique(out, fs::path(value));
    };
    add_unique(out, "/etc/gitconfig");
    from_environment("GIT_CONFIG_SYSTEM");
    from_environment("GIT_CONFIG_GLOBAL");
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
        add_unique(out, fs::path(xdg) / "git" / "config");
    }
    if (!home.empty()) {
        add_unique(out, home / ".config" / "git" / "config");
        add_unique(out, home / ".gitconfig");
    }
    return out;
}

git_reach user_git_reach(const fs::path& home) {
    git_reach out;
    for (const fs::path& file : user_git_configurations(home))
        read_git_reach(file, home, out);
    return out;
}

bool is_git_directory(const fs::path& dir) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    if (dir.filename() == ".git") return true;
    unique_fd opened(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    return opened && has_git_directory_parts(opened.get());
}

bool has_git_directory_parts(int dir) {
    struct stat part {};
    const auto has = [&part, dir](const char* name) {
        return ::fstatat(dir, name, &part, AT_SYMLINK_NOFOLLOW) == 0;
    };
    // Wider than git, never narrower: git wants HEAD too (not of a common directory a commondir
    // names), and objects and refs it can search (a symlink will do). Any entry of those names
    // counts here: a command can leave all but one and add it in a later run, or make a dangling
    // symlink's target later.
    return (has("objects") && has("refs")) || has("commondir");
}

std::variant<path_plan, std::string> plan_paths(const sandbox_policy& policy) {
    mount_snapshot mounts;
    return plan_paths(policy, mounts);
}

std::variant<path_plan, std::string> plan_paths(const sandbox_policy& policy,
                                                mount_snapshot& mounts) {
    path_plan out;
    if (auto refused = plan_hidden(policy, out, mounts)) return *refused;
    if (policy.mode != sandbox_mode::workspace_write) return out;

    out.writable_roots.push_back(policy.workspace_root);
    for (const fs::path& root : policy.rules.writable_roots) {
        if (!root.is_absolute() || canonical_path(root) != root) {
            return "refusing the writable root " + root.string() +
                   ": give the directory's own absolute path";
        }
        if (!fs::is_directory(root)) {
            return "refusing the writable root " + root.string() + ": not a directory";
        }
        add_unique(out.writable_roots, root);
    }
    for (const std::string& name : policy.rules.protect) {
        if (auto bad = bad_protected_name(name)) return *bad;
    }
    for (const fs::path& carve : policy.rules.read_only) {
        const fs::path resolved = canonical_path(carve);
        if (!carve.is_absolute() || resolved != carve || !fs::exists(carve)) {
            return "refusing the read-only path " + carve.string() +
                   ": give the existing path's own absolute path";
        }
        if (std::none_of(out.writable_roots.begin(), out.writable_roots.end(),
                         [&carve](const fs::path& root) { return is_within(carve, root); })) {
            return "refusing the read-only path " + carve.string() +
                   ": it lies in no writable root, so it is read-only already";
        }
    }
    if (!policy.rules.protect.empty()) {
        for (const fs::path& root : out.writable_roots) {
            if (auto git = inside_git_directory(root)) {
                return "refusing the writable root " + root.string() +
                       ": it lies inside the git "
                       "directory " +
                       git->string() +
                       ", whose hooks and configuration run "
                       "outside the sandbox";
            }
        }
        planner plan(policy, out);
        for (const fs::path& root : out.writable_roots)
            plan.protect_root(root);
        plan.protect_user_configuration();
        plan.protect_homes();
        plan.place_missing_stores();
        for (const fs::path& carve : policy.rules.read_only)
            add_unique(out.read_only, carve);
        plan.finish();
        if (plan.refused()) return *plan.refused();
    } else {
        for (const fs::path& carve : policy.rules.read_only)
            add_unique(out.read_only, carve);
    }
    return out;
}

}  // namespace cordon::sandbox
