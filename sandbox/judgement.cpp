// See judgement.hpp. Two passes: every changed path is classified first (which git directory's
// part it is, which protected name it lies in), then each thing found is judged once and
// neutralized, so that a configuration written a thousand times in a run is read once.
#include "sandbox/judgement.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "cordon/policy.hpp"
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
// rest named in the report (each level holds no descriptor: the walk reopens by path).
constexpr std::size_t walk_limit = 2'000'000;

bool starts_with_path(const fs::path& path, const fs::path& prefix) {
    return is_within(path, prefix);
}

struct statx_result {
    bool exists = false;
    mode_t mode = 0;
    bool has_birth = false;
    timespec birth{};
};

statx_result look(const fs::path& path) {
    struct statx sx {};
    statx_result out;
    if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                STATX_TYPE | STATX_BTIME, &sx) != 0) {
        return out;
    }
    out.exists = true;
    out.mode = sx.stx_mode;
    if ((sx.stx_mask & STATX_BTIME) != 0) {
        out.has_birth = true;
        out.birth = {static_cast<time_t>(sx.stx_btime.tv_sec),
                     static_cast<long>(sx.stx_btime.tv_nsec)};
    }
    return out;
}

bool not_before(const timespec& a, const timespec& b) {
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec);
}

// The names in the directory at `path`, or nothing when it cannot be listed.
std::vector<std::string> list(const fs::path& path) {
    std::vector<std::string> out;
    unique_fd dir = open_directory_no_symlinks(path);
    if (!dir) return out;
    const int listed = ::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listed < 0) return out;
    DIR* stream = ::fdopendir(listed);
    if (stream == nullptr) {
        ::close(listed);
        return out;
    }
    while (const dirent* entry = ::readdir(stream)) {
        const std::string_view name = entry->d_name;
        if (name != "." && name != "..") out.emplace_back(name);
    }
    ::closedir(stream);
    return out;
}

// The first line of `text` without its line ending.
std::string first_line(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
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
    for (const fs::path& file : {home / ".gitconfig", home / ".config" / "git" / "config"}) {
        unique_fd dir = open_parent_no_symlinks(file);
        if (!dir) continue;
        const auto text = read_regular_file(dir.get(), file.filename().string(), config_limit);
        if (!text) continue;
        const auto parsed = git_config::parse(*text);
        const auto* entries = std::get_if<std::vector<git_config::entry>>(&parsed);
        if (entries == nullptr) continue;
        for (const git_config::entry& e : *entries) {
            if (e.section != "init" || e.has_subsection || e.name != "templatedir" || !e.value) {
                continue;
            }
            fs::path dir_path = *e.value;
            if (e.value->starts_with("~/")) dir_path = home / e.value->substr(2);
            if (dir_path.is_absolute()) out.push_back(dir_path / "hooks");
        }
    }
    return out;
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
            if (judged_by_content(name)) continue;
            std::vector<std::string> parts;
            for (const fs::path& part : fs::path(name))
                parts.push_back(part.string());
            if (!parts.empty()) by_first_[parts.front()].push_back({name, std::move(parts)});
        }
        git_ = hooks_ || config_ || worktree_config_ || commondir_;
    }

    void consider_all(const change_set& changes) {
        for (const fs::path& moved : changes.moved) {
            if (root_of(moved)) moved_.push_back(moved);
        }
        for (const fs::path& path : changes.paths)
            consider(path);
        for (const fs::path& moved : moved_)
            walk(moved);
    }

    std::vector<neutralized_path> act() {
        for (const fs::path& git : whole_)
            judge_whole(git);
        for (const fs::path& dir : hook_directories_) {
            const statx_result st = look(dir);
            if (!st.exists) continue;
            if (!S_ISDIR(st.mode)) {
                take(dir,
                     "a git hooks directory that is not a directory: git would run what it "
                     "leads to outside the sandbox");
                continue;
            }
            for (const std::string& name : list(dir))
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
            if (starts_with_path(path, root) &&
                (!best || std::distance(root.begin(), root.end()) >
                              std::distance(best->begin(), best->end()))) {
                best = root;
            }
        }
        return best;
    }

    [[nodiscard]] bool kept(const fs::path& path) const {
        return std::any_of(scope_.kept.begin(), scope_.kept.end(),
                           [&path](const fs::path& k) { return starts_with_path(path, k); });
    }

    [[nodiscard]] bool under_moved(const fs::path& path) const {
        return std::any_of(moved_.begin(), moved_.end(),
                           [&path](const fs::path& m) { return starts_with_path(path, m); });
    }

    // New in the run: beneath a directory moved in, or born after the window opened.
    [[nodiscard]] bool is_new(const fs::path& path) const {
        if (under_moved(path)) return true;
        const statx_result st = look(path);
        return st.exists && st.has_birth && not_before(st.birth, scope_.since);
    }

    bool is_git_directory(const fs::path& dir) {
        if (auto found = git_directories_.find(dir); found != git_directories_.end()) {
            return found->second;
        }
        const bool is = sandbox::is_git_directory(dir);
        git_directories_.emplace(dir, is);
        return is;
    }

    // The git directory `path` lies in (or is), up to its writable root.
    std::optional<fs::path> git_directory_of(const fs::path& path, const fs::path& root) {
        for (fs::path at = path;; at = at.parent_path()) {
            if (is_git_directory(at)) return at;
            if (at == root || !at.has_relative_path()) return std::nullopt;
        }
    }

    void consider(const fs::path& path) {
        const std::optional<fs::path> root = root_of(path);
        if (!root || kept(path)) return;
        if (git_) consider_git(path, *root);
        for (const fs::path& hooks : scope_.hook_directories) {
            if (path == hooks) hook_directories_.insert(path);
            if (path.parent_path() == hooks) hooks_found_.insert(path);
        }
        for (const fs::path& file : scope_.configurations) {
            if (path == file) configs_.insert(path);
        }
        const fs::path relative = path.lexically_relative(*root);
        std::vector<std::string> parts;
        for (const fs::path& part : relative)
            parts.push_back(part.string());
        if (gitmodules_ && !parts.empty() && parts.back() == ".gitmodules") {
            gitmodules_files_.insert(path);
        }
        if (gitconfig_ && !parts.empty() && parts.back() == ".gitconfig") {
            user_configs_.insert(path);
        }
        for (std::size_t i = 0; i < parts.size(); ++i) {
            // Packages ship editor and tool configurations; nothing runs them from there.
            if (parts[i] == "node_modules") break;
            if (xdg_gitconfig_ && i + 3 == parts.size() && parts[i] == ".config" &&
                parts[i + 1] == "git" && parts[i + 2] == "config") {
                user_configs_.insert(path);
            }
            const auto found = by_first_.find(parts[i]);
            if (found == by_first_.end()) continue;
            for (const name_parts& name : found->second) {
                if (i + name.parts.size() > parts.size()) continue;
                if (!std::equal(name.parts.begin(), name.parts.end(),
                                parts.begin() + static_cast<std::ptrdiff_t>(i))) {
                    continue;
                }
                fs::path match = *root;
                for (std::size_t j = 0; j < i + name.parts.size(); ++j)
                    match /= parts[j];
                names_[match].insert(path);
            }
        }
    }

    void consider_git(const fs::path& path, const fs::path& root) {
        // The parent's: `path` itself may be a git directory made whole (its parts come as
        // their own changes, or from the walk of a directory moved in).
        if (path == root) return;
        const std::optional<fs::path> git = git_directory_of(path.parent_path(), root);
        if (!git) return;
        const fs::path inside = path.lexically_relative(*git);
        auto part = inside.begin();
        if (part == inside.end()) return;
        const std::string first = part->string();
        const bool alone = std::next(part) == inside.end();
        // A git directory that became one in the run (its objects or refs made, a commondir
        // added): what it held before, planted by an earlier run while it was none, is judged
        // whole now. git's own work in an existing repository never makes these.
        if (alone && (first == "objects" || first == "refs" || first == "commondir") &&
            (first == "commondir" || is_new(path))) {
            whole_.insert(*git);
        }
        if (first == "config" && alone && config_) configs_.insert(path);
        if (first == "config.worktree" && alone && worktree_config_) configs_.insert(path);
        if (first == "commondir" && alone && commondir_) commondirs_.insert(path);
        if (first == "hooks" && hooks_) {
            if (alone) {
                hook_directories_.insert(path);
            } else if (std::distance(inside.begin(), inside.end()) == 2) {
                hooks_found_.insert(path);
            }
        }
    }

    // Every part of the git directory `git` that runs or redirects anything, changed or not, and
    // those of the repository its commondir names.
    void judge_whole(const fs::path& git) {
        if (!root_of(git)) return;
        for (fs::path at = git, next; !at.empty(); at = next) {
            next.clear();
            if (config_) configs_.insert(at / "config");
            if (worktree_config_) configs_.insert(at / "config.worktree");
            if (hooks_) hook_directories_.insert(at / "hooks");
            if (commondir_) commondirs_.insert(at / "commondir");
            if (at != git) break;  // one hop: a commondir names no further one
            unique_fd dir = open_directory_no_symlinks(at);
            const auto text =
                dir ? read_regular_file(dir.get(), "commondir", config_limit) : std::nullopt;
            if (!text) break;
            fs::path common = first_line(*text);
            if (common.is_relative()) common = at / common;
            common = canonical_path(common);
            if (common != at && root_of(common)) next = common;
        }
    }

    // Everything beneath a directory moved in, without holding a descriptor per level.
    void walk(const fs::path& top) {
        std::vector<fs::path> pending{top};
        consider(top);
        std::size_t visited = 0;
        while (!pending.empty()) {
            const fs::path dir = std::move(pending.back());
            pending.pop_back();
            for (const std::string& name : list(dir)) {
                if (++visited > walk_limit) {
                    failure_ = "a directory moved in holds more than " +
                               std::to_string(walk_limit) +
                               " entries; judged in part: " + top.string();
                    return;
                }
                const fs::path path = dir / name;
                consider(path);
                struct stat st {};
                if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) pending.push_back(path);
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
        std::string kept_at = std::get<quarantine::taken>(taken).kept_at;
        const neutral_action action =
            kept_at.empty() ? neutral_action::removed : neutral_action::quarantined;
        record(path, what, action, std::move(kept_at));
    }

    void judge_hook(const fs::path& hook) {
        const std::string name = hook.filename().string();
        if (name.ends_with(".sample")) return;  // git never runs these
        const statx_result st = look(hook);
        if (!st.exists || kept(hook)) return;
        if (S_ISREG(st.mode)) {
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
        const statx_result st = look(file);
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
        const auto parsed = git_config::parse(*text);
        if (const auto* unreadable = std::get_if<std::string>(&parsed)) {
            take(file, what + " that cordon cannot read as git does (" + *unreadable + ")");
            return;
        }
        std::vector<git_config::entry> drop;
        std::string keys;
        for (const git_config::entry& e : std::get<std::vector<git_config::entry>>(parsed)) {
            if (!git_config::offence(e, kind) && !worktree_elsewhere(e, file)) continue;
            const std::string key = e.key();
            if (keys.find(key) == std::string::npos) keys += (keys.empty() ? "" : ", ") + key;
            drop.push_back(e);
        }
        if (drop.empty()) return;
        const std::string rewritten = git_config::without(*text, drop);
        // What is left must read, and hold nothing more to take: else the file goes whole.
        const auto again = git_config::parse(rewritten);
        const auto* left = std::get_if<std::vector<git_config::entry>>(&again);
        const bool clean =
            left != nullptr &&
            std::none_of(left->begin(), left->end(), [&](const git_config::entry& e) {
                return git_config::offence(e, kind) || worktree_elsewhere(e, file);
            });
        const std::string why = keys + " in " + what +
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
        if (kept(file) || !look(file).exists) return;
        const fs::path git = file.parent_path();
        unique_fd dir = open_directory_no_symlinks(git);
        const auto text =
            dir ? read_regular_file(dir.get(), "commondir", config_limit) : std::nullopt;
        // A linked worktree's git directory (<common>/worktrees/NAME) names its own repository.
        if (text && git.parent_path().filename() == "worktrees") {
            fs::path target = first_line(*text);
            if (target.is_relative()) target = git / target;
            if (canonical_path(target) == canonical_path(git.parent_path().parent_path())) return;
        }
        take(file,
             "a git commondir: git would read the configuration and hooks of the "
             "directory it names");
    }

    void judge_name(const fs::path& match, const std::set<fs::path>& changed) {
        const statx_result st = look(match);
        if (!st.exists) return;
        const std::string name = match.filename().string();
        std::string why;
        for (const std::string& protect : scope_.names) {
            if (match.string().ends_with("/" + protect)) {
                const std::string_view kind = class_of(protect);
                for (const protected_class& c : protected_classes()) {
                    if (c.name == kind) why = std::string(c.why);
                }
                if (why.empty()) why = "a protected name";
                break;
            }
        }
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
                const statx_result changed_st = look(path);
                if (!changed_st.exists || S_ISDIR(changed_st.mode)) continue;
                unit = path;
            }
            if (std::none_of(units.begin(), units.end(),
                             [&unit](const fs::path& u) { return starts_with_path(*unit, u); })) {
                std::erase_if(units,
                              [&unit](const fs::path& u) { return starts_with_path(u, *unit); });
                units.push_back(*unit);
            }
        }
        for (const fs::path& unit : units)
            take(unit, what);
    }

    const judgement_scope& scope_;
    quarantine& away_;
    std::map<std::string, std::vector<name_parts>, std::less<>> by_first_;
    bool hooks_ = false, config_ = false, worktree_config_ = false, commondir_ = false;
    bool gitmodules_ = false, gitconfig_ = false, xdg_gitconfig_ = false, git_ = false;
    std::vector<fs::path> moved_;
    std::map<fs::path, bool> git_directories_;
    std::set<fs::path> hook_directories_, hooks_found_, configs_, user_configs_, gitmodules_files_,
        commondirs_, whole_;
    std::map<fs::path, std::set<fs::path>> names_;
    std::optional<std::vector<fs::path>> templates_;
    std::vector<neutralized_path> out_;
    std::optional<std::string> failure_;
};

}  // namespace

std::string_view to_string(neutral_action value) noexcept {
    switch (value) {
        case neutral_action::quarantined:
            return "quarantined";
        case neutral_action::rewritten:
            return "rewritten";
        case neutral_action::restored:
            return "restored";
        case neutral_action::removed:
            return "removed";
        case neutral_action::failed:
            return "failed";
    }
    return "failed";
}

bool judged_by_content(std::string_view name) {
    return name == ".git" || name.starts_with(".git/") || name == ".gitmodules" ||
           name == ".gitconfig" || name == ".config/git";
}

std::vector<neutralized_path> judge_changes(const judgement_scope& scope, const change_set& changes,
                                            quarantine& away) {
    judge j(scope, away);
    j.consider_all(changes);
    std::vector<neutralized_path> out = j.act();
    if (auto failure = j.failure()) {
        out.push_back({"", *failure, neutral_action::failed, {}});
    }
    return out;
}

}  // namespace cordon::sandbox
