// See path_plan.hpp. Longer than the ~500 lines a file here stays under: the scan, what git obeys
// beyond its hooks (commondir, includes, submodules, bare repositories) and the masks' lifetime
// share the planner's state and its registry, and read best in one place.
//
// The scan reads each directory once (getdents through std::filesystem's
// directory_iterator, which reports the entry's type without a stat) and looks a protected name up
// by its first component, so that a tree is walked once whatever the length of the list.
#include "sandbox/path_plan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "base/mountinfo.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/protected_paths.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// The protected names by their first component: ".git" -> {"", "hooks", "config"}.
using name_index = std::map<std::string, std::vector<std::string>, std::less<>>;

name_index index_names(const std::vector<std::string>& names) {
    name_index out;
    for (const std::string& name : names) {
        const std::size_t slash = name.find('/');
        const std::string first = name.substr(0, slash);
        out[first].push_back(slash == std::string::npos ? "" : name.substr(slash + 1));
    }
    return out;
}

bool has_deeper_name(const std::vector<std::string>& names, const std::string& prefix) {
    return std::any_of(names.begin(), names.end(), [&prefix](const std::string& name) {
        return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
               name[prefix.size()] == '/';
    });
}

std::size_t depth(const fs::path& path) {
    return static_cast<std::size_t>(std::distance(path.begin(), path.end()));
}

void add_unique(std::vector<fs::path>& to, const fs::path& path) {
    if (std::find(to.begin(), to.end(), path) == to.end()) to.push_back(path);
}

// The registry of masks that runs of this process hold: path -> number of runs.
struct mask_registry {
    std::mutex mutex;
    std::map<fs::path, int> held;
};
mask_registry& registry() {
    static mask_registry instance;
    return instance;
}

std::map<fs::path, bool> mounted_elsewhere();
bool holds_only(const fs::path& path, std::string_view content);
std::optional<std::string> read_planted(const fs::path& path, std::size_t limit);

// What git's files are read up to: a `.git` file or a commondir names one path on its first line
// (git itself refuses a `.git` file over 1 MiB); a configuration file, its first MiB (a larger
// one is no configuration a person wrote, and its rest would cost every planning).
constexpr std::size_t first_line_limit = 64 * 1024;
constexpr std::size_t git_config_limit = std::size_t{1} << 20;

// The first line of what read_planted() read, or nullopt when that was no line: no newline
// within the bound, or a NUL (no path holds one).
std::optional<std::string> first_line(const std::optional<std::string>& text) {
    if (!text) return std::nullopt;
    const std::size_t end = text->find('\n');
    if (end == std::string::npos && text->size() >= first_line_limit) return std::nullopt;
    std::string line = text->substr(0, end);
    if (line.find('\0') != std::string::npos) return std::nullopt;
    return line;
}

class planner {
public:
    planner(const sandbox_policy& policy, path_plan& out) : out_(out) {
        names_ = policy.rules.protect;
        index_ = index_names(names_);
        // ".git/hooks" -> "hooks": what every git directory keeps.
        for (const std::string& name : names_) {
            if (name.rfind(".git/", 0) == 0 && name.find('/', 5) == std::string::npos) {
                git_names_.push_back(name.substr(5));
            }
        }
    }

    // Why a path could not be protected (a pinned file cordon could not create), if any.
    [[nodiscard]] const std::optional<std::string>& failure() const { return failure_; }

    // Scans `root` and plans its protected names; the reason when it cannot.
    std::optional<std::string> protect_root(const fs::path& root) {
        std::vector<fs::path> pending{root};
        std::size_t visited = 0;
        while (!pending.empty()) {
            const fs::path dir = std::move(pending.back());
            pending.pop_back();
            std::error_code ec;
            fs::directory_iterator it(dir, fs::directory_options::none, ec);
            if (ec) {
                // A directory the scan cannot list may hold a protected name it cannot see.
                return "cannot scan " + dir.string() + " for protected names: " + ec.message();
            }
            bool repository = dir == root;
            int git_parts = 0;  // HEAD, objects/, refs/: a git directory of another name (bare)
            for (; it != fs::directory_iterator(); it.increment(ec)) {
                if (++visited > max_scanned_entries) {
                    return "the writable root " + root.string() + " holds more than " +
                           std::to_string(max_scanned_entries) +
                           " entries to scan for protected names";
                }
                const fs::directory_entry& entry = *it;
                const std::string name = entry.path().filename().string();
                std::error_code type_ec;
                const bool symlink = entry.is_symlink(type_ec);
                const bool directory = !symlink && entry.is_directory(type_ec);
                if (name == ".git") repository = true;
                if (auto found = index_.find(name); found != index_.end()) {
                    for (const std::string& rest : found->second) {
                        if (!rest.empty() && mask_residue::masked_by_a_run(entry.path())) {
                            continue;  // another run's mask: nothing lies beneath it
                        }
                        protect_existing(root, rest.empty() ? entry.path() : entry.path() / rest,
                                         rest.empty() ? name : name + "/" + rest);
                    }
                }
                if (directory && name == ".git") protect_git_directories(root, entry.path());
                if (name == ".git" && !symlink && entry.is_regular_file(type_ec)) {
                    follow_git_file(entry.path());
                }
                if ((name == "HEAD" && !symlink && !directory) ||
                    (directory && (name == "objects" || name == "refs"))) {
                    ++git_parts;
                }
                if (directory && name != ".git" && name != "node_modules" &&
                    !mask_residue::masked_by_a_run(entry.path())) {
                    pending.push_back(entry.path());
                }
            }
            if (ec) return "cannot scan " + dir.string() + " for protected names: " + ec.message();
            if (repository) mask_missing(root, dir);
            if (git_parts == 3 && dir.filename() != ".git") {
                // A bare repository (a local remote: `git push` runs its hooks) or a git directory
                // a `.git` file leads to.
                protect_git_directory(root, dir, git_names_);
                protect_git_directories(root, dir);
            }
        }
        return std::nullopt;
    }

    void finish() {
        // Parents before what lies inside them: a mount made later covers one made earlier.
        for (auto* list : {&out_.entries, &out_.read_only, &out_.masks}) {
            std::stable_sort(list->begin(), list->end(), [](const fs::path& a, const fs::path& b) {
                return depth(a) < depth(b);
            });
        }
        // A mask wins over everything else at its path (another run's mask point, seen as an
        // existing directory); a path kept as an entry is not also bound read-only over itself.
        const auto in = [](const std::vector<fs::path>& list, const fs::path& path) {
            return std::find(list.begin(), list.end(), path) != list.end();
        };
        std::erase_if(out_.entries, [&](const fs::path& path) { return in(out_.masks, path); });
        std::erase_if(out_.read_only, [&](const fs::path& path) {
            return in(out_.masks, path) || in(out_.entries, path);
        });
    }

private:
    // `path` (`name` relative to the directory it was found in) exists or not.
    void protect_existing(const fs::path& root, const fs::path& path, const std::string& name) {
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) return;  // missing: mask_missing's part
        keep_ancestors(root, path);
        if (S_ISLNK(st.st_mode)) {
            add_unique(out_.symlinked, path);
            return;
        }
        if (mask_residue::masked_by_a_run(path) || another_cordons_point(path, st)) {
            // Another run's mask point or pinned file: kept here too, so that its end does not
            // unmask ours.
            if (S_ISREG(st.st_mode)) {
                add_unique(out_.pinned, path);
                add_unique(out_.read_only, path);
            } else {
                add_unique(out_.masks, path);
            }
            return;
        }
        ++out_.protected_count;
        if (S_ISDIR(st.st_mode) && has_deeper_name(names_, name)) {
            add_unique(out_.entries, path);
        } else {
            add_unique(out_.read_only, path);
        }
    }

    // Every missing protected name of `base` (a writable root or a repository in it): its first
    // missing component is masked, unless a component before it is not a directory.
    void mask_missing(const fs::path& root, const fs::path& base) {
        for (const std::string& name : names_) {
            fs::path at = base;
            for (const fs::path& part : fs::path(name)) {
                at /= part;
                if (mask_residue::masked_by_a_run(at)) {
                    // Another run's mask point, empty (masked here too, nothing beneath it), or
                    // its pinned file (kept read-only here too).
                    keep_ancestors(root, at);
                    struct stat held {};
                    if (::lstat(at.c_str(), &held) == 0 && S_ISREG(held.st_mode)) {
                        add_unique(out_.pinned, at);
                        add_unique(out_.read_only, at);
                    } else {
                        add_unique(out_.masks, at);
                    }
                    break;
                }
                struct stat st {};
                if (::lstat(at.c_str(), &st) != 0) {
                    if (errno == ENOENT) {
                        const bool last = at == base / name;
                        if (last &&
                            ((name.rfind(".git/", 0) == 0 && pinnable(at.filename().string())) ||
                             name == ".gitconfig")) {
                            pin(root, at);
                        } else {
                            keep_ancestors(root, at);
                            add_unique(out_.masks, at);
                        }
                    }
                    break;
                }
                if (S_ISLNK(st.st_mode)) {
                    keep_ancestors(root, at);
                    add_unique(out_.symlinked, at);
                    break;
                }
                if (!S_ISDIR(st.st_mode)) break;
                if (at != base / name &&
                    (mask_residue::masked_by_a_run(at) || another_cordons_point(at, st))) {
                    // Another run's mask of a directory on the way (`.cargo` for `.cargo/config`):
                    // masked here as well, rather than a mask point made inside it.
                    keep_ancestors(root, at);
                    add_unique(out_.masks, at);
                    break;
                }
            }
        }
    }

    // True when `path` is what another cordon process masked or pinned for a run that still goes
    // on: an empty directory under a tmpfs mount in another mount namespace, or a file mounted
    // there that holds what cordon pins (a commondir naming its own git directory, an empty
    // configuration). This run masks it too, so that whichever run ends last removes it; a file
    // of the user's that looks the same holds nothing to lose.
    bool another_cordons_point(const fs::path& path, const struct stat& st) {
        const bool directory = S_ISDIR(st.st_mode);
        if (directory) {
            std::error_code ec;
            if (!fs::is_empty(path, ec) || ec) return false;
        } else {
            const std::string name = path.filename().string();
            if (!S_ISREG(st.st_mode) || !(pinnable(name) || name == ".gitconfig") ||
                !holds_only(path, mask_residue::pinned_content(name))) {
                return false;
            }
        }
        if (!elsewhere_) elsewhere_ = mounted_elsewhere();
        const auto found = elsewhere_->find(path);
        return found != elsewhere_->end() && (!directory || found->second);
    }

    static bool pinnable(const std::string& name) {
        return name == "commondir" || name == "config" || name == "config.worktree";
    }

    // The git directories inside the repository's `.git` (its submodules', nested, and its
    // linked worktrees') keep the protected git names too.
    void protect_git_directories(const fs::path& root, const fs::path& git) {
        if (git_names_.empty()) return;
        if (std::find(git_names_.begin(), git_names_.end(), "hooks") != git_names_.end()) {
            protect_hook_targets(git / "hooks");
            protect_configured_paths(git);
        }
        walk_modules(root, git / "modules", 0);
        std::error_code ec;
        for (fs::directory_iterator it(git / "worktrees", ec);
             !ec && it != fs::directory_iterator(); it.increment(ec)) {
            std::error_code type_ec;
            if (it->is_symlink(type_ec) || !it->is_directory(type_ec)) continue;
            // A linked worktree reads its hooks and config from the common directory; what it
            // reads from its own is where that is and its config.worktree.
            protect_git_directory(root, it->path(), {"commondir", "config.worktree"});
        }
    }

    // The writable root `path` lies in, if any.
    [[nodiscard]] std::optional<fs::path> root_of(const fs::path& path) const {
        for (const fs::path& root : out_.writable_roots) {
            if (is_within(path, root)) return root;
        }
        return std::nullopt;
    }

    // A `.git` file ("gitdir: PATH": a linked worktree, a submodule, a separate git directory)
    // leads to the git directory git uses there, and that one's commondir to where its hooks and
    // config are: those in a writable root are kept as a `.git` directory's are.
    void follow_git_file(const fs::path& file) {
        const auto first = first_line(read_planted(file, first_line_limit));
        if (!first || first->rfind("gitdir:", 0) != 0) return;
        const std::string& line = *first;
        std::string target = line.substr(7);
        target.erase(0, target.find_first_not_of(" \t"));
        while (!target.empty() && (target.back() == '\r' || target.back() == ' '))
            target.pop_back();
        if (target.empty()) return;
        fs::path git = target;
        if (git.is_relative()) git = file.parent_path() / git;
        git = canonical_path(git);
        for (int hop = 0; hop < 2; ++hop) {
            if (auto root = root_of(git)) {
                protect_git_directory(*root, git, git_names_);
                protect_git_directories(*root, git);
            }
            const auto where = first_line(read_planted(git / "commondir", first_line_limit));
            if (!where || where->empty()) return;
            fs::path next = *where;
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
            const fs::path target = canonical_path(it->path());
            struct stat st {};
            if (::stat(target.c_str(), &st) == 0) protect_elsewhere(target);
        }
    }

    // What a repository's configuration says about where git reads more of it: the last
    // core.hooksPath, and every file included (include.path, includeIf.*.path), followed.
    struct git_settings {
        std::optional<std::string> hooks_path;
        std::vector<fs::path> includes;  // canonical
    };

    // core.hooksPath of the repository whose git directory is `git`, as its configuration (or the
    // user's, or a file either includes) sets it: absolute, or relative to the work tree
    // (githooks(5)); and the files they include. Both are kept like the configuration itself.
    void protect_configured_paths(const fs::path& git) {
        git_settings settings;
        const fs::path home = invoking_home();
        if (!home.empty()) {
            read_git_config(home / ".config" / "git" / "config", home, settings, 0);
            read_git_config(home / ".gitconfig", home, settings, 0);
        }
        read_git_config(git / "config", home, settings, 0);
        for (const fs::path& included : settings.includes)
            protect_elsewhere(included, true);
        if (!settings.hooks_path || settings.hooks_path->empty()) return;
        fs::path path = *settings.hooks_path;
        if (settings.hooks_path->rfind("~/", 0) == 0) {
            if (home.empty()) return;
            path = home / settings.hooks_path->substr(2);
        } else if (path.is_relative()) {
            path = git.parent_path() / path;
        }
        protect_elsewhere(canonical_path(path));
    }

    // Reads one git configuration file into `out` (a simple reading of git-config(1)'s syntax:
    // sections, `key = value`, quoted values), following its includes a few levels deep.
    static void read_git_config(const fs::path& file, const fs::path& home, git_settings& out,
                                int level) {
        constexpr int deepest_include = 10;
        if (level > deepest_include) return;
        const auto content = read_planted(file, git_config_limit);
        if (!content) return;
        std::istringstream in(*content);
        const auto lower = [](std::string text) {
            std::transform(text.begin(), text.end(), text.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            return text;
        };
        const auto trim = [](std::string text) {
            const auto first = text.find_first_not_of(" \t");
            if (first == std::string::npos) return std::string();
            const auto last = text.find_last_not_of(" \t\r");
            return text.substr(first, last - first + 1);
        };
        std::string section;  // "core", "include", "includeif", ...
        std::string line;
        while (std::getline(in, line)) {
            line = trim(line);
            if (line.empty() || line[0] == '#' || line[0] == ';') continue;
            if (line[0] == '[') {
                const auto close = line.find(']');
                std::string header =
                    lower(trim(line.substr(1, close == std::string::npos ? 0 : close - 1)));
                section = header.substr(0, header.find_first_of(" \t\"."));
                if (close == std::string::npos) continue;
                line = trim(line.substr(close + 1));  // "[core] hooksPath = x" is one line
                if (line.empty()) continue;
            }
            const auto equals = line.find('=');
            if (equals == std::string::npos) continue;
            const std::string key = lower(trim(line.substr(0, equals)));
            std::string value = trim(line.substr(equals + 1));
            if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
                value = value.substr(1, value.size() - 2);
            }
            if (section == "core" && key == "hookspath") {
                out.hooks_path = value;
            } else if ((section == "include" || section == "includeif") && key == "path" &&
                       !value.empty()) {
                fs::path included = value;
                if (value.rfind("~/", 0) == 0) {
                    if (home.empty()) continue;
                    included = home / value.substr(2);
                } else if (included.is_relative()) {
                    included = file.parent_path() / included;
                }
                included = canonical_path(included);
                if (std::find(out.includes.begin(), out.includes.end(), included) !=
                    out.includes.end()) {
                    continue;
                }
                out.includes.push_back(included);
                read_git_config(included, home, out, level + 1);
            }
        }
    }

    // `path` (canonical) is kept read-only if it lies in a writable root; if missing, its first
    // missing component is masked, or pinned when that is the file itself and `file` (a
    // configuration git reads: git refuses a directory there).
    void protect_elsewhere(const fs::path& path, bool file = false) {
        for (const fs::path& root : out_.writable_roots) {
            if (!is_within(path, root) || path == root) continue;
            struct stat st {};
            if (::lstat(path.c_str(), &st) == 0) {
                keep_ancestors(root, path);
                ++out_.protected_count;
                add_unique(out_.read_only, path);
            } else if (errno == ENOENT) {
                // Its first missing component, as for a missing protected name.
                fs::path at = root;
                for (const fs::path& part : path.lexically_relative(root)) {
                    at /= part;
                    if (::lstat(at.c_str(), &st) != 0) break;
                }
                if (file && at == path) {
                    pin(root, at);
                } else {
                    keep_ancestors(root, at);
                    add_unique(out_.masks, at);
                }
            }
            return;
        }
    }

    // `.git/modules` holds a git directory per submodule, at the submodule's name (which may
    // have slashes), each with a `modules` of its own.
    void walk_modules(const fs::path& root, const fs::path& dir, int level) {
        constexpr int deepest = 32;
        if (level > deepest) return;
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
             it.increment(ec)) {
            std::error_code type_ec;
            if (it->is_symlink(type_ec) || !it->is_directory(type_ec)) continue;
            struct stat st {};
            if (::lstat((it->path() / "HEAD").c_str(), &st) == 0) {
                protect_git_directory(root, it->path(), git_names_);
                walk_modules(root, it->path() / "modules", level + 1);
            } else {
                walk_modules(root, it->path(), level + 1);
            }
        }
    }

    // The protected git names among `names` in the git directory `dir`.
    void protect_git_directory(const fs::path& root, const fs::path& dir,
                               const std::vector<std::string>& names) {
        for (const std::string& name : names) {
            if (std::find(git_names_.begin(), git_names_.end(), name) == git_names_.end()) continue;
            const fs::path path = dir / name;
            struct stat st {};
            if (::lstat(path.c_str(), &st) == 0) {
                protect_existing(root, path, ".git/" + name);
            } else if (errno == ENOENT) {
                if (pinnable(name)) {
                    pin(root, path);
                } else {
                    keep_ancestors(root, path);
                    add_unique(out_.masks, path);
                }
            }
        }
    }

    // Creates the missing git file `path` with what git reads as nothing, kept read-only for the
    // run and removed after it (mask_residue).
    void pin(const fs::path& root, const fs::path& path) {
        keep_ancestors(root, path);
        const std::string name = path.filename().string();
        const std::string_view content = mask_residue::pinned_content(name);
        if (!mask_residue::masked_by_a_run(path)) {
            // The directory is opened without following a symlink: a run in progress may have
            // replaced a component of the path with one.
            const int dir = landlock::open_no_symlinks(path.parent_path().c_str(), O_DIRECTORY);
            if (dir < 0) {
                fail_on(path, errno);
                return;
            }
            const int fd = ::openat(dir, name.c_str(),
                                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            const int open_error = errno;
            ::close(dir);
            if (fd < 0) {
                if (open_error == EEXIST) {
                    // Made meanwhile: protected as it is.
                    protect_existing(root, path, name);
                } else if (open_error == EACCES || open_error == EPERM || open_error == EROFS) {
                    // Nobody running as this user can create it: the command cannot either.
                } else {
                    fail_on(path, open_error);
                }
                return;
            }
            const bool written =
                ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
            const int write_error = errno;
            ::close(fd);
            if (!written) {
                ::unlink(path.c_str());
                fail_on(path, write_error);
                return;
            }
        }
        ++out_.protected_count;
        add_unique(out_.pinned, path);
        add_unique(out_.read_only, path);
    }

    void fail_on(const fs::path& path, int error) {
        if (!failure_) {
            failure_ = "cannot keep " + path.string() + " from being created: " +
                       std::error_code(error, std::generic_category()).message();
        }
    }

    // Every directory strictly between `root` and `path` is kept as an entry.
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

    path_plan& out_;
    std::vector<std::string> names_;
    std::vector<std::string> git_names_;
    name_index index_;
    std::optional<std::string> failure_;
    std::optional<std::map<fs::path, bool>> elsewhere_;  // read once, when first needed
};

std::optional<std::string> plan_hidden(const path_rules& rules, path_plan& out) {
    for (const fs::path& denied : effective_deny_read(rules)) {
        if (!denied.is_absolute()) return "--deny-read needs an absolute path: " + denied.string();
        struct stat st {};
        if (::lstat(denied.c_str(), &st) != 0) continue;  // nothing there to read
        const fs::path target = canonical_path(denied);
        if (::stat(target.c_str(), &st) != 0) continue;  // a dangling link reads nothing
        if (std::none_of(out.hidden.begin(), out.hidden.end(),
                         [&target](const hidden_path& h) { return h.path == target; })) {
            out.hidden.push_back({target, S_ISDIR(st.st_mode)});
        }
    }
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
    }
    return std::nullopt;
}

}  // namespace

std::variant<path_plan, std::string> plan_paths(const sandbox_policy& policy) {
    path_plan out;
    if (auto refused = plan_hidden(policy.rules, out)) return *refused;
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

    // What was pinned before a refusal, removed again once the registry's lock is released (the
    // removal takes it too).
    std::unique_ptr<mask_residue> discard;
    std::optional<std::string> refusal;
    {
        // Planned and registered under one lock, so that a run planned meanwhile sees the masks.
        std::lock_guard lock(registry().mutex);
        planner plan(policy, out);
        if (!policy.rules.protect.empty()) {
            for (const fs::path& root : out.writable_roots) {
                auto refused = plan.protect_root(root);
                if (!refused && plan.failure()) refused = plan.failure();
                if (refused) {
                    for (const fs::path& pinned : out.pinned)
                        ++registry().held[pinned];
                    discard = std::make_unique<mask_residue>(out.pinned);
                    refusal = "refusing a workspace-write run: " + *refused;
                    break;
                }
            }
        }
        if (refusal) {
            out = {};
        } else {
            for (const fs::path& carve : policy.rules.read_only) {
                add_unique(out.read_only, carve);
            }
            plan.finish();
            if (!out.masks.empty() || !out.pinned.empty()) {
                std::vector<fs::path> points = out.masks;
                points.insert(points.end(), out.pinned.begin(), out.pinned.end());
                for (const fs::path& point : points)
                    ++registry().held[point];
                out.residue = std::make_shared<const mask_residue>(std::move(points));
            }
        }
    }
    if (refusal) {
        discard.reset();
        return *refusal;
    }
    return out;
}

mask_residue::mask_residue(std::vector<fs::path> masks) : masks_(std::move(masks)) {}

std::string_view mask_residue::pinned_content(std::string_view name) {
    // commondir: relative to the git directory, "." names the git directory itself.
    return name == "commondir" ? ".\n" : "";
}

bool mask_residue::masked_by_a_run(const fs::path& path) {
    // Called with the registry's lock held (from plan_paths) or not at all.
    auto& held = registry().held;
    auto found = held.find(path);
    return found != held.end() && found->second > 0;
}

namespace {

// The mount points in mount namespaces other than this process's, read from the processes this
// process may inspect (its uid's: every cordon run's bwrap); true where one of them is a tmpfs.
std::map<fs::path, bool> mounted_elsewhere() {
    std::map<fs::path, bool> out;
    std::error_code ec;
    const fs::path own = fs::read_symlink("/proc/self/ns/mnt", ec);
    std::set<fs::path> seen{own};
    for (fs::directory_iterator it("/proc", ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
        const std::string pid = it->path().filename().string();
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::error_code link_ec;
        const fs::path ns = fs::read_symlink(it->path() / "ns" / "mnt", link_ec);
        if (link_ec || !seen.insert(ns).second) continue;
        auto table = base::read_mountinfo(it->path() / "mountinfo");
        if (auto* mounts = std::get_if<std::vector<base::mount_entry>>(&table)) {
            for (const base::mount_entry& mount : *mounts)
                out[mount.point] = out[mount.point] || mount.type == "tmpfs";
        }
    }
    return out;
}

// The text of a file a command may have planted or swapped since it was looked at (a `.git`
// file, a commondir, a git configuration), or nullopt when it is not a regular file. Opened
// without blocking, so that a FIFO put in its place does not hang the planning, and read up to
// `limit` bytes only, so that neither does a sparse terabyte (the rest is ignored: what is read
// here is a first line, or a configuration no larger than git's own files are).
std::optional<std::string> read_planted(const fs::path& path, std::size_t limit) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    std::optional<std::string> out;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        std::string text(std::min(limit, static_cast<std::size_t>(st.st_size)), '\0');
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t got = ::read(fd, text.data() + done, text.size() - done);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;
            done += static_cast<std::size_t>(got);
        }
        text.resize(done);
        out = std::move(text);
    }
    ::close(fd);
    return out;
}

// True when the regular file `path` holds exactly `content`.
bool holds_only(const fs::path& path, std::string_view content) {
    // O_NONBLOCK: a FIFO swapped in since the caller's lstat does not hang cordon.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return false;
    }
    char buffer[16];
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    ::close(fd);
    return got >= 0 && static_cast<std::size_t>(got) == content.size() &&
           std::string_view(buffer, static_cast<std::size_t>(got)) == content;
}

}  // namespace

mask_residue::~mask_residue() {
    std::vector<fs::path> last;
    {
        std::lock_guard lock(registry().mutex);
        for (const fs::path& mask : masks_) {
            auto found = registry().held.find(mask);
            if (found == registry().held.end()) continue;
            if (--found->second == 0) {
                registry().held.erase(found);
                last.push_back(mask);
            }
        }
        if (last.empty()) return;
        const std::map<fs::path, bool> elsewhere = mounted_elsewhere();
        for (const fs::path& mask : last) {
            if (elsewhere.contains(mask)) continue;
            // Only the empty directory bwrap made or the file cordon pinned: anything else is not
            // ours.
            struct stat st {};
            if (::lstat(mask.c_str(), &st) != 0) continue;
            if (S_ISREG(st.st_mode)) {
                if (holds_only(mask, pinned_content(mask.filename().string())))
                    ::unlink(mask.c_str());
            } else if (S_ISDIR(st.st_mode)) {
                ::rmdir(mask.c_str());  // fails unless empty
            }
        }
    }
}

}  // namespace cordon::sandbox
