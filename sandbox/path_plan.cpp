// See path_plan.hpp. The scan reads each directory once (getdents through std::filesystem's
// directory_iterator, which reports the entry's type without a stat) and looks a protected name up
// by its first component, so that a tree is walked once whatever the length of the list.
#include "sandbox/path_plan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "base/mountinfo.hpp"
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

class planner {
public:
    planner(const sandbox_policy& policy, path_plan& out) : policy_(policy), out_(out) {
        names_ = policy.rules.protect;
        index_ = index_names(names_);
    }

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
                if (directory && name != ".git" && name != "node_modules" &&
                    !mask_residue::masked_by_a_run(entry.path())) {
                    pending.push_back(entry.path());
                }
            }
            if (ec) return "cannot scan " + dir.string() + " for protected names: " + ec.message();
            if (repository) mask_missing(root, dir);
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
        if (mask_residue::masked_by_a_run(path)) {
            // Another run's mask point: masked here too, so that its end does not unmask ours.
            add_unique(out_.masks, path);
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
                    // Another run's mask point, empty: masked here too, nothing beneath it.
                    keep_ancestors(root, at);
                    add_unique(out_.masks, at);
                    break;
                }
                struct stat st {};
                if (::lstat(at.c_str(), &st) != 0) {
                    if (errno == ENOENT) {
                        keep_ancestors(root, at);
                        add_unique(out_.masks, at);
                    }
                    break;
                }
                if (S_ISLNK(st.st_mode)) {
                    keep_ancestors(root, at);
                    add_unique(out_.symlinked, at);
                    break;
                }
                if (!S_ISDIR(st.st_mode)) break;
            }
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

    const sandbox_policy& policy_;
    path_plan& out_;
    std::vector<std::string> names_;
    name_index index_;
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

    {
        // Planned and registered under one lock, so that a run planned meanwhile sees the masks.
        std::lock_guard lock(registry().mutex);
        planner plan(policy, out);
        if (!policy.rules.protect.empty()) {
            for (const fs::path& root : out.writable_roots) {
                if (auto refused = plan.protect_root(root))
                    return "refusing a workspace-write run: " + *refused;
            }
        }
        for (const fs::path& carve : policy.rules.read_only) {
            add_unique(out.read_only, carve);
        }
        plan.finish();
        if (!out.masks.empty()) {
            for (const fs::path& mask : out.masks)
                ++registry().held[mask];
            out.residue = std::make_shared<const mask_residue>(out.masks);
        }
    }
    return out;
}

mask_residue::mask_residue(std::vector<fs::path> masks) : masks_(std::move(masks)) {}

bool mask_residue::masked_by_a_run(const fs::path& path) {
    // Called with the registry's lock held (from plan_paths) or not at all.
    auto& held = registry().held;
    auto found = held.find(path);
    return found != held.end() && found->second > 0;
}

namespace {

// The mount points in mount namespaces other than this process's, read from the processes this
// process may inspect (its uid's: every cordon run's bwrap).
std::set<fs::path> mounted_elsewhere() {
    std::set<fs::path> out;
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
                out.insert(mount.point);
        }
    }
    return out;
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
        const std::set<fs::path> elsewhere = mounted_elsewhere();
        for (const fs::path& mask : last) {
            if (elsewhere.contains(mask)) continue;
            // Only the empty file or directory bwrap made: anything with content is not ours.
            struct stat st {};
            if (::lstat(mask.c_str(), &st) != 0) continue;
            if (S_ISREG(st.st_mode) && st.st_size == 0) {
                ::unlink(mask.c_str());
            } else if (S_ISDIR(st.st_mode)) {
                ::rmdir(mask.c_str());  // fails unless empty
            }
        }
    }
}

}  // namespace cordon::sandbox
