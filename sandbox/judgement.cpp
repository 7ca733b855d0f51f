// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// See judgement.hpp. Two passes: every changed path is classified first (which git directory's
// part it is, which protected name it lies in), then each thing found is judged once and
// neutralized, so that a configuration written a thousand times in a run is read once.
//
// Longer than the ~500 lines a file here stays under: the judge is one class whose passes share
// the changed paths' classification (git directories, protected names, what is new); split, each
// rule would be read away from the classification it reads.
#include "sandbox/judgement.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "cordon/policy.hpp"
#include "sandbox/directory_listing.hpp"
#include "sandbox/git_config.hpp"
#include "sandbox/path_plan.hpp"
#include "sandbox/protected_paths.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// What git reads of a configuration, a `.git` file or a commondir: more is no file a person wrote.
constexpr std::size_t config_limit = std::size_t{1} << 20;
constexpr std::size_t hook_limit = std::size_t{1} << 20;
// A tree moved in whole is walked; one larger than this is judged as far as it was walked and the
// rest named in the report.
constexpr std::size_t walk_limit = 2'000'000;

struct statx_result {
    bool exists = false;
    mode_t mode = 0;
    std::uint32_t links = 0;
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    bool has_birth = false;
    timespec birth{};
};

statx_result from_statx(const struct statx& sx) {
    statx_result out;
    out.exists = true;
    out.mode = sx.stx_mode;
    out.links = sx.stx_nlink;
    out.device = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    out.inode = sx.stx_ino;
    if ((sx.stx_mask & STATX_BTIME) != 0) {
        out.has_birth = true;
        out.birth = {static_cast<time_t>(sx.stx_btime.tv_sec),
                     static_cast<long>(sx.stx_btime.tv_nsec)};
    }
    return out;
}

constexpr unsigned statx_fields = STATX_TYPE | STATX_NLINK | STATX_INO | STATX_BTIME;

bool not_before(const timespec& a, const timespec& b) {
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec);
}

// A canonical absolute path as text: its parent ("/" for "/x"), and its last name. The judgement
// works on text where it can: a path two thousand names deep costs as much to parse each time as
// to look it up.
std::string_view parent_text(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) return path;
    return slash == 0 ? path.substr(0, 1) : path.substr(0, slash);
}

std::string_view name_text(std::string_view path) {
    return path.substr(path.rfind('/') + 1);
}

std::string joined(std::string_view dir, std::string_view name) {
    std::string out(dir);
    if (!out.ends_with('/')) out += '/';
    out += name;
    return out;
}

// Looks at the tree through descriptors of the directories it looked in last: a path of any
// depth costs a lookup of its last name, not of every one (a command can leave a tree two
// thousand levels deep, and every entry in it is looked at). Nothing follows a symlink.
class tree_reader {
public:
    statx_result look(std::string_view path) {
        statx_result out;
        const int dir = directory(parent_text(path));
        const std::string name(name_text(path));
        struct statx sx {};
        if (dir < 0 || name.empty() ||
            ::statx(dir, name.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, statx_fields,
                    &sx) != 0) {
            return out;
        }
        return from_statx(sx);
    }

    // The names in the directory `path`; nullopt (and errno) when it cannot be listed. One the
    // effective uid owns is made listable first.
    std::optional<std::vector<std::string>> list(std::string_view path) {
        const int dir = directory(path);
        if (dir < 0) return std::nullopt;
        auto names = names_in(dir);
        if (!names && errno == EACCES && make_listable(dir)) names = names_in(dir);
        return names;
    }

    statx_result look(const fs::path& path) { return look(std::string_view(path.native())); }
    statx_result look(const std::string& path) { return look(std::string_view(path)); }
    std::optional<std::vector<std::string>> list(const fs::path& path) {
        return list(std::string_view(path.native()));
    }

    // Whether the directory `path` is a git directory, as sandbox::is_git_directory() says.
    bool is_git_directory(std::string_view path) {
        if (!S_ISDIR(look(path).mode)) return false;
        if (name_text(path) == ".git") return true;
        const int dir = directory(path);
        return dir >= 0 && has_git_directory_parts(dir);
    }

private:
    static constexpr std::size_t kept_open = 256;

    // The directory `path` opened (O_PATH): from the nearest one above that is open, one name at
    // a time; -1 when it cannot be.
    int directory(std::string_view path) {
        if (auto found = open_.find(std::string(path)); found != open_.end()) {
            return found->second.get();
        }
        std::vector<std::string_view> down{path};
        int at = -1;
        for (std::string_view up = parent_text(path);; up = parent_text(up)) {
            if (auto found = open_.find(std::string(up)); found != open_.end()) {
                at = found->second.get();
                break;
            }
            if (up == "/" || down.size() >= 64) {
                unique_fd opened = open_directory_no_symlinks(fs::path(up));
                if (!opened) return -1;
                at = remember(up, std::move(opened));
                break;
            }
            down.push_back(up);
        }
        for (auto it = down.rbegin(); it != down.rend(); ++it) {
            const std::string name(name_text(*it));
            unique_fd next(
                ::openat(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!next) return -1;
            at = remember(*it, std::move(next));
        }
        return at;
    }

    int remember(std::string_view path, unique_fd fd) {
        if (order_.size() >= kept_open) {
            open_.erase(order_.front());
            order_.pop_front();
        }
        order_.emplace_back(path);
        return open_.insert_or_assign(std::string(path), std::move(fd)).first->second.get();
    }

    std::unordered_map<std::string, unique_fd> open_;
    std::deque<std::string> order_;  // the oldest first
};

// "a, b, c and 4 more": the keys a judgement names, a few of them.
std::string listed(const std::vector<std::string>& keys) {
    constexpr std::size_t shown = 8;
    std::string out;
    for (std::size_t i = 0; i < keys.size() && i < shown; ++i)
        out += (i == 0 ? "" : ", ") + keys[i];
    if (keys.size() > shown) out += " and " + std::to_string(keys.size() - shown) + " more";
    return out;
}

// The hook templates git copies into a new repository: git's own, and the user's
// init.templateDir, read from the user's configuration.
std::vector<fs::path> hook_template_directories() {
    std::vector<fs::path> out{"/usr/share/git-core/templates/hooks"};
    if (const char* env = std::getenv("GIT_TEMPLATE_DIR"); env != nullptr && *env == '/') {
        out.push_back(fs::path(env) / "hooks");
    }
    const fs::path home = invoking_home();
    if (home.empty()) return out;
    // Every file git may read it from, each through its links, in either whitespace reading.
    for (const fs::path& named : user_git_configurations(home)) {
        const fs::path file = canonical_path(named);
        unique_fd dir = open_parent_no_symlinks(file);
        if (!dir) continue;
        const auto text = read_regular_file(dir.get(), file.filename().string(), config_limit);
        if (!text) continue;
        for (const auto inside : {git_config::whitespace::kept, git_config::whitespace::spaces}) {
            const auto parsed = git_config::parse(*text, inside);
            const auto* entries = std::get_if<std::vector<git_config::entry>>(&parsed);
            if (entries == nullptr) continue;
            for (const git_config::entry& e : *entries) {
                if (e.section != "init" || e.has_subsection || e.name != "templatedir" ||
                    !e.value) {
                    continue;
                }
                for (const std::string& path :
                     git_config::expanded_paths(*e.value, home.native())) {
                    if (fs::path(path).is_absolute()) out.push_back(fs::path(path) / "hooks");
                }
            }
        }
    }
    return out;
}

std::optional<fs::path> git_directory_of_work_tree(const fs::path& top) {
    const fs::path git = top / ".git";
    struct stat st {};
    if (::lstat(git.c_str(), &st) != 0) return std::nullopt;
    if (S_ISDIR(st.st_mode)) return git;
    if (!S_ISREG(st.st_mode)) return std::nullopt;
    unique_fd parent = open_directory_no_symlinks(top);
    const auto text =
        parent ? read_regular_file(parent.get(), ".git", git_config::gitfile_limit) : std::nullopt;
    const auto named = text ? git_config::gitfile_target(*text) : std::nullopt;
    if (!named) return std::nullopt;
    fs::path target = *named;
    if (target.is_relative()) target = top / target;
    return canonical_path(target);
}

class judge {
public:
    judge(const judgement_scope& scope, quarantine& away) : scope_(scope), away_(away) {
        for (const std::string& name : scope.names) {
            if (name == ".git/hooks") hooks_ = true;
            if (name == ".git/config") config_ = true;
            if (name == ".git/config.worktree") worktree_config_ = true;
            if (name == ".git/commondir") commondir_ = true;
            if (name == ".gitmodules") gitmodules_ = true;
            if (name == ".gitconfig") gitconfig_ = true;
            if (name == ".config/git") xdg_gitconfig_ = true;
            if (judged_by_content(name) || name == path_directories || home_anchored(name)) {
                continue;  // the anchored ones come as places
            }
            std::vector<std::string> parts;
            for (const fs::path& part : fs::path(name))
                parts.push_back(part.string());
            if (!parts.empty()) by_first_[parts.front()].push_back({name, std::move(parts)});
        }
        git_ = hooks_ || config_ || worktree_config_ || commondir_;
        for (const existing_directory& dir : scope.existing)
            existing_.emplace(dir.path.native(), &dir);
        for (const protected_place& place : scope.places) {
            place_names_.emplace(place.path.native(), place.name);
            for (std::string_view at = parent_text(place.path.native());
                 on_the_way_to_places_.insert(std::string(at)).second && at != "/";
                 at = parent_text(at)) {
            }
        }
    }

    void consider_all(const change_set& changes) {
        std::vector<fs::path> walked;
        for (const fs::path& moved : changes.moved) {
            if (root_of(moved) && moved_.insert(moved.native()).second) walked.push_back(moved);
        }
        for (const fs::path& path : changes.paths)
            consider(path.native());
        for (const fs::path& moved : walked)
            walk(moved);
        for (const fs::path& deep : changes.unnameable)
            unnameable_.insert(deep);
    }

    std::vector<neutralized_path> act() {
        // Deepest last: one beneath another already taken goes with it.
        std::vector<fs::path> taken_whole;
        for (const fs::path& deep : unnameable_) {
            if (std::any_of(taken_whole.begin(), taken_whole.end(), [&deep](const fs::path& t) {
                    return within_text(deep.native(), t.native());
                })) {
                continue;
            }
            taken_whole.push_back(deep);
            take(deep,
                 "a directory deeper than a path can name (more than 4096 bytes): what it holds "
                 "cannot be judged, and git reaches it through a symlink all the same");
        }
        for (const fs::path& git : whole_)
            judge_whole(git);
        for (const fs::path& dir : hook_directories_) {
            const statx_result st = reader_.look(dir);
            if (!st.exists) continue;
            if (!S_ISDIR(st.mode)) {
                take(dir,
                     "a git hooks directory that is not a directory: git would run what it "
                     "leads to outside the sandbox");
                continue;
            }
            // One that was there before holds the user's hooks: what the run made or changed
            // in it comes as its own change.
            if (!is_new(dir) && !listed_whole_.contains(dir)) continue;
            const auto names = reader_.list(dir);
            if (!names) {
                take(dir,
                     "a git hooks directory cordon cannot list: git would run what it holds "
                     "outside the sandbox");
                continue;
            }
            for (const std::string& name : *names)
                hooks_found_.insert(dir / name);
        }
        for (const fs::path& hook : hooks_found_)
            judge_hook(hook);
        for (const fs::path& file : configs_)
            judge_config(file, git_config::file_kind::repository, "a git configuration");
        for (const fs::path& file : user_configs_)
            judge_config(file, git_config::file_kind::repository, "a user's git configuration");
        for (const fs::path& file : gitmodules_files_)
            judge_config(file, git_config::file_kind::gitmodules, ".gitmodules");
        for (const fs::path& file : commondirs_)
            judge_commondir(file);
        for (const fs::path& file : instructions_)
            judge_instructions(file);
        for (const auto& [match, changed] : names_)
            judge_name(match, changed);
        return std::move(out_);
    }

    std::optional<std::string> failure() const { return failure_; }

private:
    struct name_parts {
        std::string name;
        std::vector<std::string> parts;
    };

    [[nodiscard]] std::optional<fs::path> root_of(const fs::path& path) const {
        std::optional<fs::path> best;
        for (const fs::path& root : scope_.roots) {
            if (is_within(path, root) && (!best || std::distance(root.begin(), root.end()) >
                                                       std::distance(best->begin(), best->end()))) {
                best = root;
            }
        }
        return best;
    }

    // Kept read-only for the run: nothing changed it, but for a file of several names, written
    // through another one, which no bind covers (`ln scripts/pc .git/hooks/pre-commit`).
    [[nodiscard]] bool kept(std::string_view path) {
        if (std::none_of(scope_.kept.begin(), scope_.kept.end(),
                         [&path](const fs::path& k) { return within_text(path, k.native()); })) {
            return false;
        }
        const statx_result st = reader_.look(path);
        return !st.exists || S_ISDIR(st.mode) || st.links < 2;
    }
    [[nodiscard]] bool kept(const fs::path& path) { return kept(std::string_view(path.native())); }

    // Beneath (or is) a directory renamed in whole, up to `root`.
    bool under_moved(std::string_view path) {
        if (moved_.empty()) return false;
        std::vector<std::string_view> unknown;
        bool under = false;
        for (std::string_view at = path;; at = parent_text(at)) {
            if (auto found = under_moved_.find(std::string(at)); found != under_moved_.end()) {
                under = found->second;
                break;
            }
            if (moved_.contains(std::string(at))) {
                under = true;
                break;
            }
            unknown.push_back(at);
            if (at == "/") break;
        }
        for (std::string_view at : unknown)
            under_moved_.emplace(at, under);
        return under;
    }

    // New in the run: beneath a directory moved in, or born after the window opened.
    bool is_new(std::string_view path) {
        if (auto found = new_.find(std::string(path)); found != new_.end()) return found->second;
        bool is = under_moved(path);
        if (!is) {
            const statx_result st = reader_.look(path);
            is = st.exists && st.has_birth && not_before(st.birth, scope_.since) &&
                 !was_there(path, st);
        }
        new_.emplace(path, is);
        return is;
    }
    bool is_new(const fs::path& path) { return is_new(std::string_view(path.native())); }

    // The same directory as one that held a writable root when the window opened.
    [[nodiscard]] bool was_there(std::string_view path, const statx_result& st) const {
        const auto found = existing_.find(std::string(path));
        if (found == existing_.end()) return false;
        const existing_directory& then = *found->second;
        return S_ISDIR(st.mode) && st.device == then.device && st.inode == then.inode &&
               st.has_birth == then.has_birth &&
               (!st.has_birth ||
                (st.birth.tv_sec == then.birth.tv_sec && st.birth.tv_nsec == then.birth.tv_nsec));
    }

    // The git directories among `dir` and its parents up to `root`, the innermost first. Every
    // one of them is judged: a git directory inside another's part (a `hooks` made to look like
    // one) hides nothing from the outer one. Each directory is looked at once.
    const std::vector<std::string>& git_directories_above(std::string_view dir,
                                                          std::string_view root) {
        return above(dir, root, git_above_,
                     [this](std::string_view at) { return reader_.is_git_directory(at); });
    }

    // The work trees `dir` lies in (itself or a parent up to `root` holding a `.git`), the
    // innermost first.
    const std::vector<std::string>& work_trees_above(std::string_view dir, std::string_view root) {
        return above(dir, root, work_trees_, [this](std::string_view at) {
            return reader_.look(joined(at, ".git")).exists;
        });
    }

    // The directories among `dir` and its parents up to `root` that `is` says are, the innermost
    // first, remembered per directory in `memo`: a path of any depth costs one look per new
    // directory.
    template <typename Is>
    const std::vector<std::string>& above(
        std::string_view dir, std::string_view root,
        std::unordered_map<std::string, std::vector<std::string>>& memo, Is is) {
        std::vector<std::string_view> unknown;  // innermost first
        const std::vector<std::string>* known = nullptr;
        for (std::string_view at = dir;; at = parent_text(at)) {
            if (auto found = memo.find(std::string(at)); found != memo.end()) {
                known = &found->second;
                break;
            }
            unknown.push_back(at);
            if (at == root || at == "/") break;
        }
        std::vector<std::string> found = known ? *known : std::vector<std::string>{};
        const std::vector<std::string>* last = known;
        for (auto at = unknown.rbegin(); at != unknown.rend(); ++at) {
            if (is(*at)) found.insert(found.begin(), std::string(*at));
            last = &memo.insert_or_assign(std::string(*at), found).first->second;
        }
        static const std::vector<std::string> none;
        return last != nullptr ? *last : none;
    }

    // Whether the canonical `path` is `root` or lies beneath it, by their text.
    static bool within_text(std::string_view path, std::string_view root) {
        return path.starts_with(root) &&
               (path.size() == root.size() || root == "/" || path[root.size()] == '/');
    }

    // The writable root `path` lies in (the deepest), by text.
    [[nodiscard]] const fs::path* root_of_text(std::string_view path) const {
        const fs::path* best = nullptr;
        for (const fs::path& root : scope_.roots) {
            if (within_text(path, root.native()) &&
                (best == nullptr || root.native().size() > best->native().size())) {
                best = &root;
            }
        }
        return best;
    }

    void consider(std::string_view text) {
        const fs::path* root = root_of_text(text);
        if (root == nullptr) return;
        if (kept(text)) return;
        // Made when something is found: most paths are nothing's part, and a deep one costs.
        std::optional<fs::path> made;
        const auto path = [&made, text]() -> const fs::path& {
            if (!made) made.emplace(std::string(text));
            return *made;
        };
        // Repositories and names are looked for from the outermost root that holds the path: a
        // root given inside another (`--writable-root ws/.config`, `ws/proj/.githooks`) keeps the
        // outer root's names that lie inside it (`.config/git`) and what a repository above it
        // obeys (its core.hooksPath, its includes). A name that is the inner root or holds it was
        // given on purpose, and what lies in that root is written as given.
        const fs::path* outermost = root;
        for (const fs::path& other : scope_.roots) {
            if (other.native().size() < outermost->native().size() &&
                within_text(text, other.native())) {
                outermost = &other;
            }
        }
        const std::string_view parent = parent_text(text);
        if (git_ && name_text(text) == ".git") consider_git_link(path());
        if (git_ && text != outermost->native()) {
            for (const std::string& git : git_directories_above(parent, outermost->native()))
                consider_git(text, git);
            for (const std::string& top : work_trees_above(parent, outermost->native()))
                consider_reach(text, reach_of(top));
        }
        for (const fs::path& hooks : scope_.hook_directories) {
            if (text == hooks.native()) hook_directories_.insert(path());
            if (parent == hooks.native()) hooks_found_.insert(path());
        }
        for (const fs::path& file : scope_.configurations) {
            if (text == file.native()) configs_.insert(path());
        }
        if (!place_names_.empty()) {
            // The places at or above the path, looked up a directory at a time (a /home of a
            // thousand accounts has a hundred thousand places). One that is the inner root or
            // holds it was given on purpose, as for a name.
            for (std::string_view at = text;; at = parent_text(at)) {
                if (place_names_.contains(std::string(at)) && !within_text(root->native(), at))
                    names_[fs::path(std::string(at))].insert(path());
                if (at == root->native() || at == "/") break;
            }
            if (on_the_way_to_places_.contains(std::string(text)) && text != root->native() &&
                !S_ISDIR(reader_.look(text).mode)) {
                // On the way to a place, a link the run made (`~/.cargo -> ../y`): the place is
                // wherever it leads now, and what the run put there no name judges. Taken. (A
                // directory it made or moved there is walked, and the place found in it.)
                names_[path()].insert(path());
                on_the_way_.insert(path());
            }
        }
        std::vector<std::string_view> parts;
        std::vector<std::size_t> ends;
        for (std::size_t at = outermost->native().size(); at < text.size();) {
            if (text[at] == '/') {
                ++at;
                continue;
            }
            const std::size_t end = std::min(text.find('/', at), text.size());
            parts.push_back(text.substr(at, end - at));
            ends.push_back(end);
            at = end;
        }
        if (gitmodules_ && !parts.empty() && parts.back() == ".gitmodules") {
            gitmodules_files_.insert(path());
        }
        if (gitconfig_ && !parts.empty() && parts.back() == ".gitconfig") {
            user_configs_.insert(path());
        }
        const std::size_t inner = root->native().size();
        for (std::size_t i = 0; i < parts.size(); ++i) {
            // Packages ship editor and tool configurations; nothing runs them from there.
            if (parts[i] == "node_modules" && ends[i] > inner) break;
            if (xdg_gitconfig_ && i + 3 == parts.size() && parts[i] == ".config" &&
                parts[i + 1] == "git" && parts[i + 2] == "config") {
                user_configs_.insert(path());
            }
            const auto found = by_first_.find(parts[i]);
            if (found == by_first_.end()) continue;
            for (const name_parts& name : found->second) {
                const std::size_t count = name.parts.size();
                if (i + count > parts.size() ||
                    !std::equal(name.parts.begin(), name.parts.end(),
                                parts.begin() + static_cast<std::ptrdiff_t>(i))) {
                    continue;
                }
                if (ends[i + count - 1] <= inner) continue;  // the inner root, or what holds it
                names_[fs::path(text.substr(0, ends[i + count - 1]))].insert(path());
            }
        }
    }

    // A `.git` that is a symlink makes what it leads to a repository's git directory, whatever
    // it held before: that is judged whole. One that leads where no path can name is taken.
    void consider_git_link(const fs::path& link) {
        if (!S_ISLNK(reader_.look(link).mode)) return;
        std::error_code ec;
        const fs::path target = fs::canonical(link, ec);
        if (ec == std::errc::filename_too_long) {
            unnameable_.insert(link);
            return;
        }
        if (!ec && root_of(target) && reader_.is_git_directory(target.native())) {
            whole_.insert(target);
        }
    }

    // `path` as a part of the git directory `git`, which it lies in.
    void consider_git(std::string_view path, std::string_view git) {
        const std::string_view inside = path.substr(git.size() + 1);
        const std::size_t slash = inside.find('/');
        const std::string_view first = inside.substr(0, slash);
        const bool alone = slash == std::string_view::npos;
        // A git directory that became one in the run (its objects or refs made, a commondir
        // added): what it held before, planted by an earlier run while it was none, is judged
        // whole now. git's own work in an existing repository never makes these.
        if (alone && (first == "objects" || first == "refs" || first == "commondir") &&
            (first == "commondir" || is_new(path))) {
            whole_.insert(fs::path(git));
        }
        if (first == "config" && alone && config_) configs_.insert(fs::path(path));
        if (first == "config.worktree" && alone && worktree_config_)
            configs_.insert(fs::path(path));
        if (first == "commondir" && alone && commondir_) commondirs_.insert(fs::path(path));
        // The instruction sheet of a rebase (or a cherry-pick) stopped midway: `git rebase
        // --continue` runs its `exec` lines.
        if (config_ && (first == "rebase-merge" || first == "sequencer") && !alone) {
            const std::string_view rest = inside.substr(slash + 1);
            if (rest == "git-rebase-todo" || rest == "todo") instructions_.insert(fs::path(path));
        }
        if (first == "hooks" && hooks_) {
            if (alone) {
                hook_directories_.insert(fs::path(path));
            } else if (inside.find('/', slash + 1) == std::string_view::npos) {
                hooks_found_.insert(fs::path(path));
            }
        }
    }

    // A repository_reach, as text.
    struct reach {
        std::unordered_set<std::string> hook_directories;
        std::unordered_set<std::string> hook_targets;
        std::unordered_set<std::string> configurations;
    };

    // The reach of the repository whose work tree is `top`. Read once per work tree.
    const reach& reach_of(const std::string& top) {
        if (auto found = reaches_.find(top); found != reaches_.end()) return found->second;
        reach& out = reaches_[top];
        if (!hooks_ && !config_) return out;
        if (!user_hooks_paths_) user_hooks_paths_ = user_hooks_paths();
        const repository_reach read = reach_of_work_tree(top, scope_.roots, *user_hooks_paths_);
        for (const fs::path& path : read.hook_directories)
            out.hook_directories.insert(path.native());
        for (const fs::path& path : read.hook_targets)
            out.hook_targets.insert(path.native());
        for (const fs::path& path : read.configurations)
            out.configurations.insert(path.native());
        return out;
    }

    void consider_reach(std::string_view path, const reach& of) {
        if (of.hook_directories.empty() && of.hook_targets.empty() && of.configurations.empty()) {
            return;
        }
        const std::string text(path);
        if (of.hook_directories.contains(text)) hook_directories_.insert(fs::path(text));
        if (of.hook_directories.contains(std::string(parent_text(text)))) {
            hooks_found_.insert(fs::path(text));
        }
        if (of.hook_targets.contains(text)) hooks_found_.insert(fs::path(text));
        if (of.configurations.contains(text)) configs_.insert(fs::path(text));
    }

    // Every part of the git directory `git` that runs or redirects anything, changed or not, and
    // those of the repository its commondir names.
    void judge_whole(const fs::path& git) {
        if (!root_of(git)) return;
        for (fs::path at = git, next; !at.empty(); at = next) {
            next.clear();
            if (config_) configs_.insert(at / "config");
            if (worktree_config_) configs_.insert(at / "config.worktree");
            if (hooks_) {
                hook_directories_.insert(at / "hooks");
                listed_whole_.insert(at / "hooks");
            }
            if (commondir_) commondirs_.insert(at / "commondir");
            if (at != git) break;  // one hop: a commondir names no further one
            unique_fd dir = open_directory_no_symlinks(at);
            const auto text =
                dir ? read_regular_file(dir.get(), "commondir", config_limit) : std::nullopt;
            if (!text) break;
            fs::path common = git_config::commondir_target(*text);
            if (common.is_relative()) common = at / common;
            common = canonical_path(common);
            if (common != at && root_of(common)) next = common;
        }
    }

    // Everything beneath a directory moved in, without holding a descriptor per level.
    void walk(const fs::path& top) {
        std::vector<std::string> pending{top.native()};
        consider(top.native());
        std::size_t visited = 0;
        while (!pending.empty()) {
            const std::string dir = std::move(pending.back());
            pending.pop_back();
            const auto names = reader_.list(std::string_view(dir));
            if (!names) {
                const int error = errno;
                if (reader_.look(dir).exists && !failure_) {
                    failure_ =
                        "cannot list " + dir + ", moved in by the run: " + std::strerror(error);
                }
                continue;
            }
            for (const std::string& name : *names) {
                if (++visited > walk_limit) {
                    failure_ = "a directory moved in holds more than " +
                               std::to_string(walk_limit) +
                               " entries; judged in part: " + top.string();
                    return;
                }
                std::string path = joined(dir, name);
                if (path.size() >= PATH_MAX) {
                    unnameable_.insert(fs::path(path));
                    continue;
                }
                consider(path);
                if (S_ISDIR(reader_.look(path).mode)) pending.push_back(std::move(path));
            }
        }
    }

    void record(const fs::path& path, std::string what, neutral_action action,
                std::string kept_at = {}) {
        out_.push_back({path.string(), std::move(what), action, std::move(kept_at)});
    }

    void take(const fs::path& path, const std::string& what) {
        const std::optional<fs::path> root = root_of(path);
        if (!root) return;
        auto taken = away_.take(*root, path, what);
        if (auto* failed = std::get_if<std::string>(&taken)) {
            record(path, what + " (" + *failed + ")", neutral_action::failed);
            return;
        }
        if (std::get<quarantine::taken>(taken).gone) return;  // another judgement's doing
        std::string kept_at = std::get<quarantine::taken>(taken).kept_at;
        const neutral_action action =
            kept_at.empty() ? neutral_action::removed : neutral_action::quarantined;
        record(path, what, action, std::move(kept_at));
    }

    void judge_hook(const fs::path& hook) {
        const std::string name = hook.filename().string();
        if (name.ends_with(".sample")) return;  // git never runs these
        const statx_result st = reader_.look(hook);
        if (!st.exists || kept(hook)) return;
        // One of several names of a file: what is written through another one runs as this
        // hook, and the template vouches for nothing.
        if (S_ISREG(st.mode) && st.links == 1) {
            unique_fd dir = open_parent_no_symlinks(hook);
            const auto content =
                dir ? read_regular_file(dir.get(), name, hook_limit) : std::nullopt;
            if (content) {
                if (!templates_) {
                    // A template the run could have written vouches for nothing.
                    templates_ = hook_template_directories();
                    std::erase_if(*templates_, [this](const fs::path& place) {
                        return root_of(place).has_value();
                    });
                }
                for (const fs::path& templates : *templates_) {
                    unique_fd template_dir = open_directory_no_symlinks(templates);
                    if (!template_dir) continue;
                    if (read_regular_file(template_dir.get(), name, hook_limit) == content) return;
                }
            }
        }
        take(hook, "a git hook (hooks/" + name + "): git runs it outside the sandbox");
    }

    void judge_config(const fs::path& file, git_config::file_kind kind, const std::string& what) {
        const statx_result st = reader_.look(file);
        if (!st.exists || kept(file)) return;
        unique_fd dir = open_parent_no_symlinks(file);
        const std::string name = file.filename().string();
        const auto text = dir ? read_regular_file(dir.get(), name, config_limit) : std::nullopt;
        if (!text) {
            take(file, what +
                           " that is not a regular file of at most 1 MiB: git would read it "
                           "from elsewhere");
            return;
        }
        // A NUL ends git's strings where it lies (a name, a value): cordon reads it as git does,
        // but no person writes one, and taking such a file whole costs nothing.
        if (text->find('\0') != std::string::npos) {
            take(file, what + " with a NUL byte in it");
            return;
        }
        const auto parsed = git_config::parse(*text);
        if (const auto* unreadable = std::get_if<std::string>(&parsed)) {
            take(file, what + " that cordon cannot read as git does (" + *unreadable + ")");
            return;
        }
        std::vector<git_config::entry> drop;
        std::vector<std::string> keys;
        std::unordered_set<std::string> seen;
        for (const git_config::entry& e : std::get<std::vector<git_config::entry>>(parsed)) {
            if (!git_config::offence(e, kind) && !worktree_elsewhere(e, file)) continue;
            if (std::string key = e.key(); seen.insert(key).second) keys.push_back(std::move(key));
            drop.push_back(e);
        }
        if (drop.empty()) {
            // Clean, but one of several names of a file: what is written through another one
            // becomes this configuration. It gets a file of its own.
            if (st.links > 1) {
                const std::string why = what +
                                        " with other names (hard links) a command could write "
                                        "through: given a file of its own";
                if (auto failed = replace_file(dir.get(), name, *text)) {
                    take(file, why);
                } else {
                    record(file, why, neutral_action::rewritten);
                }
            }
            return;
        }
        const std::string rewritten = git_config::without(*text, drop);
        // What is left must read, and hold nothing more to take: else the file goes whole.
        const auto again = git_config::parse(rewritten);
        const auto* left = std::get_if<std::vector<git_config::entry>>(&again);
        const bool clean =
            left != nullptr &&
            std::none_of(left->begin(), left->end(), [&](const git_config::entry& e) {
                return git_config::offence(e, kind) || worktree_elsewhere(e, file);
            });
        const std::string why = listed(keys) + " in " + what +
                                ": not known to be inert, git could run what they name outside "
                                "the sandbox";
        if (!clean) {
            take(file, why);
            return;
        }
        const std::optional<fs::path> root = root_of(file);
        std::string kept_at = root ? away_.keep_copy(*root, file, *text, why) : std::string();
        if (auto failed = replace_file(dir.get(), name, rewritten)) {
            take(file, why);
            return;
        }
        record(file, why, neutral_action::rewritten, std::move(kept_at));
    }

    // core.worktree of a git directory's configuration (`file`) that leads out of the writable
    // roots: git would check files out there, into the host's tree, when the user runs it in the
    // repository. A submodule's leads into its superproject's tree, which stays.
    [[nodiscard]] bool worktree_elsewhere(const git_config::entry& e, const fs::path& file) const {
        if (e.section != "core" || e.has_subsection || e.name != "worktree" || !e.value) {
            return false;
        }
        fs::path tree = *e.value;
        if (tree.is_relative()) tree = file.parent_path() / tree;
        return !root_of(canonical_path(tree));
    }

    void judge_commondir(const fs::path& file) {
        if (kept(file) || !reader_.look(file).exists) return;
        const fs::path git = file.parent_path();
        unique_fd dir = open_directory_no_symlinks(git);
        const auto text =
            dir ? read_regular_file(dir.get(), "commondir", config_limit) : std::nullopt;
        // A linked worktree's git directory (<common>/worktrees/NAME) names its own repository;
        // a file of several names could be rewritten through another.
        if (text && reader_.look(file).links == 1 && git.parent_path().filename() == "worktrees") {
            fs::path target = git_config::commondir_target(*text);
            if (target.is_relative()) target = git / target;
            if (canonical_path(target) == canonical_path(git.parent_path().parent_path())) return;
        }
        take(file,
             "a git commondir: git would read the configuration and hooks of the "
             "directory it names");
    }

    void judge_instructions(const fs::path& file) {
        if (kept(file) || !reader_.look(file).exists) return;
        unique_fd dir = open_parent_no_symlinks(file);
        const std::string name = file.filename().string();
        const auto text = dir ? read_regular_file(dir.get(), name, config_limit) : std::nullopt;
        bool runs = !text;
        for (std::size_t at = 0; text && at < text->size() && !runs;) {
            const std::size_t end = std::min(text->find('\n', at), text->size());
            std::string_view line = std::string_view(*text).substr(at, end - at);
            at = end + 1;
            line.remove_prefix(std::min(line.size(), line.find_first_not_of(" \t")));
            const std::string_view word = line.substr(0, line.find_first_of(" \t\r"));
            runs = word == "exec" || word == "x";
        }
        if (!runs) return;
        take(file,
             "a rebase's instructions with a command (exec): `git rebase --continue` runs it "
             "outside the sandbox");
    }

    void judge_name(const fs::path& match, const std::set<fs::path>& changed) {
        const statx_result st = reader_.look(match);
        if (!st.exists) return;
        const std::string name = match.filename().string();
        const auto why_of = [](std::string_view protect) {
            const std::string_view kind = class_of(protect);
            for (const protected_class& c : protected_classes()) {
                if (c.name == kind) return std::string(c.why);
            }
            return std::string("a protected name");
        };
        std::string why;
        if (const auto place = place_names_.find(match.native()); place != place_names_.end()) {
            why = place->second == hidden_store_place
                      ? "made where a hidden credential store is missing: a tool of the host "
                        "would write the secret into what the run can read (a link, a file of "
                        "several names)"
                      : why_of(place->second);
        }
        if (why.empty() && on_the_way_.contains(match)) {
            why =
                "on the way to a protected place, made by the run: what lies beyond it would "
                "run outside the sandbox";
        }
        for (const std::string& protect : scope_.names) {
            if (!why.empty()) break;
            if (match.string().ends_with("/" + protect)) why = why_of(protect);
        }
        if (why.empty()) why = "a protected name";
        const std::string what = "a protected name (" + name + "): " + why;
        if (!S_ISDIR(st.mode) || is_new(match)) {
            take(match, what);
            return;
        }
        // An existing directory: only what the run made or changed in it goes.
        std::vector<fs::path> units;
        for (const fs::path& path : changed) {
            if (path == match) continue;
            std::optional<fs::path> unit;
            fs::path at = match;
            for (const fs::path& part : path.lexically_relative(match)) {
                at /= part;
                if (is_new(at)) {
                    unit = at;
                    break;
                }
            }
            if (!unit) {
                const statx_result changed_st = reader_.look(path);
                if (!changed_st.exists || S_ISDIR(changed_st.mode)) continue;
                unit = path;
            }
            if (std::none_of(units.begin(), units.end(),
                             [&unit](const fs::path& u) { return is_within(*unit, u); })) {
                std::erase_if(units, [&unit](const fs::path& u) { return is_within(u, *unit); });
                units.push_back(*unit);
            }
        }
        for (const fs::path& unit : units)
            take(unit, what);
    }

    const judgement_scope& scope_;
    quarantine& away_;
    tree_reader reader_;
    std::map<std::string, std::vector<name_parts>, std::less<>> by_first_;
    bool hooks_ = false, config_ = false, worktree_config_ = false, commondir_ = false;
    bool gitmodules_ = false, gitconfig_ = false, xdg_gitconfig_ = false, git_ = false;
    std::unordered_set<std::string> moved_;
    std::unordered_map<std::string, bool> under_moved_, new_;
    std::unordered_map<std::string, const existing_directory*> existing_;  // scope_.existing
    std::unordered_map<std::string, std::vector<std::string>> git_above_, work_trees_;
    std::unordered_map<std::string, reach> reaches_;
    std::optional<std::vector<std::string>> user_hooks_paths_;  // read once
    std::set<fs::path> hook_directories_, hooks_found_, configs_, user_configs_, gitmodules_files_,
        commondirs_, whole_, listed_whole_, unnameable_, instructions_;
    std::map<fs::path, std::set<fs::path>> names_;
    std::set<fs::path> on_the_way_;  // not directories, on the way to a place
    std::unordered_map<std::string, std::string> place_names_;  // scope_.places, by path
    std::unordered_set<std::string> on_the_way_to_places_;      // their directories above
    std::optional<std::vector<fs::path>> templates_;
    std::vector<neutralized_path> out_;
    std::optional<std::string> failure_;
};

// A hooks directory `hooks` (canonical) in the roots, and what its symlinked hooks lead to there.
template <typename InRoots>
void reach_hooks(const fs::path& hooks, const InRoots& in_roots, repository_reach& out) {
    if (!in_roots(hooks)) return;
    if (std::find(out.hook_directories.begin(), out.hook_directories.end(), hooks) !=
        out.hook_directories.end()) {
        return;
    }
    out.hook_directories.push_back(hooks);
    unique_fd dir = open_directory_no_symlinks(hooks);
    for (const std::string& name : dir ? names_in(dir.get()).value_or(std::vector<std::string>{})
                                       : std::vector<std::string>{}) {
        struct stat st {};
        if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISLNK(st.st_mode)) {
            continue;
        }
        const fs::path target = canonical_path(hooks / name);
        if (in_roots(target)) out.hook_targets.push_back(target);
    }
}

}  // namespace

std::vector<std::string> user_hooks_paths() {
    return user_git_reach(invoking_home()).hooks_paths;
}

repository_reach reach_of_work_tree(const fs::path& top, std::span<const fs::path> roots,
                                    const std::vector<std::string>& user_hooks) {
    repository_reach out;
    const auto in_roots = [roots](const fs::path& path) {
        return std::any_of(roots.begin(), roots.end(),
                           [&path](const fs::path& root) { return is_within(path, root); });
    };
    const std::optional<fs::path> git_directory = git_directory_of_work_tree(top);
    if (!git_directory) return out;
    const fs::path& git = *git_directory;
    // A linked worktree's or a submodule's hooks and configuration are its common directory's.
    fs::path common = git;
    if (unique_fd dir = open_directory_no_symlinks(git)) {
        if (const auto text = read_regular_file(dir.get(), "commondir", config_limit)) {
            fs::path named = git_config::commondir_target(*text);
            if (named.is_relative()) named = git / named;
            common = canonical_path(named);
        }
    }
    const fs::path home = invoking_home();
    git_reach read;
    read_git_reach(common / "config", home, read);
    if (common != git) read_git_reach(git / "config.worktree", home, read);
    for (const fs::path& included : read.includes) {
        if (in_roots(included)) out.configurations.push_back(included);
    }
    // Every hooksPath any git may take (the repository's, the user's: which one wins depends on
    // the order of files and includes), and the hooks directory of the common directory.
    std::vector<fs::path> candidates{common / "hooks"};
    for (const std::vector<std::string>* paths : {&std::as_const(read.hooks_paths), &user_hooks}) {
        for (const std::string& hooks_path : *paths) {
            if (hooks_path.empty()) continue;
            fs::path hooks = hooks_path;
            if (hooks.is_relative()) hooks = top / hooks;
            candidates.push_back(hooks);
        }
    }
    for (const fs::path& candidate : candidates)
        reach_hooks(canonical_path(candidate), in_roots, out);
    return out;
}

bool judged_by_content(std::string_view name) {
    return name == ".git" || name.starts_with(".git/") || name == ".gitmodules" ||
           name == ".gitconfig" || name == ".config/git";
}

std::vector<existing_directory> directories_holding_roots(std::span<const fs::path> roots) {
    std::set<fs::path> paths;
    for (const fs::path& root : roots) {
        paths.insert(root);
        for (const fs::path& outer : roots) {
            if (outer == root || !is_within(root, outer)) continue;
            for (fs::path at = root.parent_path(); at != outer && is_within(at, outer);
                 at = at.parent_path()) {
                paths.insert(at);
            }
        }
    }
    std::vector<existing_directory> out;
    for (const fs::path& path : paths) {
        struct statx sx {};
        if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, statx_fields,
                    &sx) != 0) {
            continue;
        }
        const statx_result st = from_statx(sx);
        if (!S_ISDIR(st.mode)) continue;
        out.push_back({path, st.device, st.inode, st.has_birth, st.birth});
    }
    return out;
}

judged_changes judge_changes(const judgement_scope& scope, const change_set& changes,
                             quarantine& away) {
    judge j(scope, away);
    j.consider_all(changes);
    judged_changes out;
    out.neutralized = j.act();
    out.failure = changes.incomplete ? changes.incomplete : j.failure();
    return out;
}

}  // namespace cordon::sandbox
