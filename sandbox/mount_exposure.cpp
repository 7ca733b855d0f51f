// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How a workspace-write run's writable roots reach what runs unconfined later through
// filesystems rather than spellings (mount_exposure.hpp): bind mounts, overlays and their layers,
// loop devices, FUSE, and the pseudo filesystems no workspace may be.
#include "sandbox/mount_exposure.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <map>
#include <string_view>
#include <system_error>

#include "base/small_file.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// Filesystems whose "files" are kernel or host state rather than data (statfs(2) types).
constexpr std::array<std::string_view, 29> pseudo_types{
    "proc",      "sysfs",    "cgroup",     "cgroup2",     "devtmpfs",   "devpts",
    "mqueue",    "bpf",      "debugfs",    "tracefs",     "securityfs", "pstore",
    "efivarfs",  "configfs", "fusectl",    "binfmt_misc", "hugetlbfs",  "autofs",
    "selinuxfs", "nsfs",     "rpc_pipefs", "functionfs",  "gadgetfs",   "smackfs",
    "nfsd",      "resctrl",  "cpuset",     "xenfs",       "apparmorfs"};

fs::path canonical_or_normal(const fs::path& path) {
    std::error_code ec;
    fs::path out = fs::weakly_canonical(path, ec);
    return ec ? path.lexically_normal() : out;
}

}  // namespace

namespace {
std::atomic<std::uint64_t> mount_reads{0};
}  // namespace

std::variant<std::vector<mount_entry>, std::string> read_mounts() {
    mount_reads.fetch_add(1, std::memory_order_relaxed);
    return base::read_mountinfo();
}

std::uint64_t mount_table_reads() noexcept {
    return mount_reads.load(std::memory_order_relaxed);
}

const std::variant<std::vector<mount_entry>, std::string>& mount_snapshot::table() {
    if (!table_) table_ = read_mounts();
    return *table_;
}

std::optional<std::string> pseudo_filesystem_at(const fs::path& root,
                                                const std::vector<mount_entry>& mounts) {
    for (const char* special : {"/dev", "/proc", "/sys"}) {
        if (is_within(root, special)) {
            return root.string() + " lies in " + special +
                   ", where writes reach the kernel, devices or other processes";
        }
        if (is_within(special, root)) {
            return root.string() + " holds " + special +
                   ", where writes reach the kernel, devices or other processes";
        }
    }
    for (const mount_entry& mount : mounts) {
        if (std::find(pseudo_types.begin(), pseudo_types.end(), mount.type) == pseudo_types.end()) {
            continue;
        }
        if (is_within(root, mount.point) || is_within(mount.point, root)) {
            return root.string() + (is_within(root, mount.point) ? " lies in" : " holds") +
                   " the " + mount.type + " filesystem at " + mount.point.string() +
                   ", where writes reach the kernel rather than files";
        }
    }
    return std::nullopt;
}

namespace {

// Where `path` (canonical) lives: the filesystem and the directory within it, as the mount that
// shows it says (the last of the longest mount points above it: later mounts cover earlier ones).
struct location {
    std::string device;
    fs::path within;
    bool read_only = false;  // the mount that shows it is read-only
};

// The mount that shows `path`: the top one of those at the longest mount point above it. A mount
// on top of another at the same point has that one as its parent; mountinfo's order alone does
// not say which is on top (`mount --move` puts an older mount over a newer one).
const mount_entry* showing(const fs::path& path, const std::vector<mount_entry>& mounts) {
    std::vector<const mount_entry*> deepest;
    std::size_t best_depth = 0;
    for (const mount_entry& mount : mounts) {
        if (!is_within(path, mount.point)) continue;
        const auto depth =
            static_cast<std::size_t>(std::distance(mount.point.begin(), mount.point.end()));
        if (deepest.empty() || depth > best_depth) {
            deepest.clear();
            best_depth = depth;
        }
        if (depth == best_depth) deepest.push_back(&mount);
    }
    const auto covered = [&](const mount_entry* below) {
        return std::any_of(deepest.begin(), deepest.end(), [&](const mount_entry* other) {
            return other != below && other->parent == below->id;
        });
    };
    for (auto it = deepest.rbegin(); it != deepest.rend(); ++it) {
        if (!covered(*it)) return *it;
    }
    return deepest.empty() ? nullptr : deepest.back();
}

// `path` below `mount.point`, as the directory of the mounted filesystem it is: the mount's own
// root (a bind of a subdirectory) and the rest of the path.
fs::path within_mount(const fs::path& path, const mount_entry& mount) {
    fs::path out = mount.root.relative_path();
    const fs::path rest = path.lexically_relative(mount.point);
    if (!rest.empty() && rest != ".") out /= rest;
    return out;
}

std::optional<location> locate(const fs::path& path, const std::vector<mount_entry>& mounts) {
    const mount_entry* shown_by = showing(path, mounts);
    if (shown_by == nullptr) return std::nullopt;
    return location{shown_by->device, ("/" / within_mount(path, *shown_by)).lexically_normal(),
                    shown_by->read_only};
}

}  // namespace

std::vector<fs::path> other_names(const fs::path& path, const std::vector<mount_entry>& mounts) {
    std::vector<fs::path> out;
    const std::optional<location> where = locate(path, mounts);
    struct stat original {};
    if (!where || ::stat(path.c_str(), &original) != 0) return out;
    for (const mount_entry& mount : mounts) {
        if (mount.device != where->device) continue;
        const fs::path root = ("/" / mount.root.relative_path()).lexically_normal();
        if (!is_within(where->within, root)) continue;
        const fs::path rest = where->within.lexically_relative(root);
        const fs::path alias =
            (rest.empty() || rest == "." ? mount.point : mount.point / rest).lexically_normal();
        if (alias == path || std::find(out.begin(), out.end(), alias) != out.end()) continue;
        // Shown there, not covered by another mount on the way: the same file.
        struct stat seen {};
        if (::stat(alias.c_str(), &seen) == 0 && seen.st_dev == original.st_dev &&
            seen.st_ino == original.st_ino) {
            out.push_back(alias);
        }
    }
    return out;
}

namespace {

// A FUSE filesystem writes wherever its daemon puts the data: bindfs shows any directory, so
// nothing about it tells cordon that writes stay away from what runs unconfined.
bool is_fuse(std::string_view type) {
    return type == "fuse" || type == "fuseblk" || type.rfind("fuse.", 0) == 0;
}

// Every value of `key` among a mount's filesystem options, still escaped (mountinfo escapes a
// comma in a value, so splitting at commas is exact).
std::vector<std::string_view> super_option_values(const mount_entry& mount, std::string_view key) {
    std::vector<std::string_view> out;
    std::string_view rest = mount.super_options;
    while (!rest.empty()) {
        const std::string_view option = rest.substr(0, rest.find(','));
        rest.remove_prefix(std::min(rest.size(), option.size() + 1));
        if (option.size() > key.size() && option.substr(0, key.size()) == key &&
            option[key.size()] == '=') {
            out.push_back(option.substr(key.size() + 1));
        }
    }
    return out;
}

// One directory an overlay's options name, and what it is to the overlay.
struct layer {
    enum class kind { upper, work, lower };
    fs::path path;
    kind is;

    [[nodiscard]] std::string_view name() const {
        switch (is) {
            case kind::upper:
                return "upper layer";
            case kind::work:
                return "work directory";
            case kind::lower:
                return "lower layer";
        }
        return "layer";
    }
};

// The directories the overlay `mount` writes (its upper layer and work directory) and, with
// `lowers`, those it shows (its lower and data-only layers too), each as the directory that
// holds what the mount shows at `below` (the work directory whole). The kernel shows a name as
// the mounter gave it, so one that is relative (to the mounter's directory), holds overlay's own
// backslash escapes, or has "." or ".." in it (resolved through the symlinks of that moment) is
// not a place cordon can check: the error names it.
std::optional<std::string> overlay_layers(const mount_entry& mount, const fs::path& below,
                                          bool lowers, std::vector<layer>& out) {
    const auto add = [&](std::string_view escaped, layer::kind is) -> std::optional<std::string> {
        const std::string name = base::unescape_mount_field(escaped);
        bool placed = !name.empty() && name.front() == '/' && name.find('\\') == std::string::npos;
        for (const fs::path& part : fs::path(name)) {
            placed = placed && part != "." && part != "..";
        }
        layer found{fs::path(name), is};
        if (!placed) {
            return "names its " + std::string(found.name()) + " \"" + name +
                   "\", which cordon cannot place in the host's directories";
        }
        if (is != layer::kind::work) found.path /= below;
        found.path = canonical_or_normal(found.path);
        out.push_back(std::move(found));
        return std::nullopt;
    };
    for (std::string_view upper : super_option_values(mount, "upperdir")) {
        if (auto error = add(upper, layer::kind::upper)) return error;
    }
    for (std::string_view work : super_option_values(mount, "workdir")) {
        if (auto error = add(work, layer::kind::work)) return error;
    }
    if (!lowers) return std::nullopt;
    // "a:b::c": lower layers a and b, data-only layer c. A ':' inside a name is escaped with a
    // backslash, which makes that name one cordon does not place.
    for (std::string_view key : {"lowerdir", "lowerdir+", "datadir+"}) {
        for (std::string_view list : super_option_values(mount, key)) {
            while (!list.empty()) {
                const std::string_view name = list.substr(0, list.find(':'));
                list.remove_prefix(std::min(list.size(), name.size() + 1));
                if (name.empty()) continue;
                if (auto error = add(name, layer::kind::lower)) return error;
            }
        }
    }
    return std::nullopt;
}

// The image file behind the loop device `device` ("major:minor") holding a filesystem, or
// behind the loop device one of whose partitions it is; nullopt for any other device. The reason
// when sysfs cannot tell: a block device it does not list (no /sys), or a file it will not give.
using loop_image = std::variant<std::optional<fs::path>, std::string>;
loop_image loop_backing_file(const std::string& device) {
    // Major 0: an anonymous device (tmpfs, overlay, procfs...), never a block device.
    if (device.rfind("0:", 0) == 0) return std::nullopt;
    const fs::path node = "/sys/dev/block/" + device;
    std::error_code ec;
    if (!fs::exists(node, ec)) {
        return "cordon cannot tell whether the block device " + device +
               " is a loop device whose image the command could write: " + node.string() +
               (ec ? ": " + ec.message() : std::string(" is missing"));
    }
    for (const char* up : {"", "/.."}) {
        const fs::path file = node.string() + up + "/loop/backing_file";
        const base::read_result text = base::read_small_file(file);
        if (const auto* error = std::get_if<base::read_error>(&text)) {
            if (error->error == ENOENT) continue;  // not a loop device (or partition of one)
            return "cordon cannot tell whether the block device " + device +
                   " is a loop device whose image the command could write: " +
                   error->describe(file);
        }
        const std::string& name = std::get<std::string>(text);
        const std::string_view line = std::string_view(name).substr(0, name.find('\n'));
        if (!line.empty() && line.front() == '/') return std::optional<fs::path>(line);
    }
    return std::nullopt;
}

bool has_upper_layer(const mount_entry& mount) {
    return !super_option_values(mount, "upperdir").empty();
}

// A filesystem that is mounted read-only as a whole: an overlay without an upper layer is.
bool read_only_filesystem(const mount_entry& mount) {
    return mount.super_options == "ro" || mount.super_options.rfind("ro,", 0) == 0;
}

}  // namespace

std::optional<std::string> exposed_through_mounts(std::span<const protected_path> paths,
                                                  std::span<const fs::path> writable_roots,
                                                  const std::vector<mount_entry>& mounts) {
    if (writable_roots.empty()) return std::nullopt;
    // At most this many directories are followed through overlays (of overlays) from each side;
    // beyond it, the run is refused rather than half checked.
    constexpr std::size_t most_followed = 64;

    // Where the command's writes land. A root writes itself and every mount at or beneath it (a
    // bind mount shows another directory of some filesystem there); an overlay among those
    // mounts, or the overlay that shows the root, also writes its upper layer and its work
    // directory, which may lie anywhere: those are followed as roots of their own.
    struct writable {
        fs::path path;
        fs::path root;    // the root it was reached from
        std::string via;  // how: empty for a root itself
    };
    std::vector<writable> reached;
    for (const fs::path& root : writable_roots) {
        reached.push_back({root, root, {}});
    }
    for (std::size_t i = 0; i < reached.size(); ++i) {
        if (reached.size() > most_followed) {
            return reached[i].root.string() + " reaches more than " +
                   std::to_string(most_followed) +
                   " directories through overlays, which the command could write; cordon does "
                   "not follow them all";
        }
        const writable current = reached[i];
        const mount_entry* shown_by = showing(current.path, mounts);
        std::vector<const mount_entry*> relevant;
        for (const mount_entry& mount : mounts) {
            if (&mount != shown_by && is_within(mount.point, current.path) && !mount.read_only) {
                relevant.push_back(&mount);
            }
        }
        if (shown_by != nullptr && !shown_by->read_only) relevant.push_back(shown_by);
        for (const mount_entry* mount : relevant) {
            const std::string relation = mount == shown_by ? " lies in" : " holds";
            if (is_fuse(mount->type)) {
                return current.path.string() + relation + " the " + mount->type +
                       " filesystem at " + mount->point.string() +
                       ", which the command could write; its writes land wherever its daemon "
                       "puts them, and cordon cannot tell that they stay away from what runs "
                       "unconfined later";
            }
            if (mount->type != "overlay") continue;
            if (!has_upper_layer(*mount) && !read_only_filesystem(*mount)) {
                return current.path.string() + relation + " the overlay at " +
                       mount->point.string() +
                       ", which is writable but names no upper layer; cordon cannot tell where "
                       "its writes land";
            }
            const fs::path below = mount == shown_by ? within_mount(current.path, *mount)
                                                     : mount->root.relative_path();
            std::vector<layer> layers;
            if (auto unplaced = overlay_layers(*mount, below, false, layers)) {
                return current.path.string() + relation + " the overlay at " +
                       mount->point.string() + ", which the command could write and which " +
                       *unplaced;
            }
            for (layer& each : layers) {
                const bool seen = std::any_of(reached.begin(), reached.end(),
                                              [&](const auto& w) { return w.path == each.path; });
                if (!seen) {
                    reached.push_back({std::move(each.path), current.root,
                                       "the " + std::string(each.name()) + " of the overlay at " +
                                           mount->point.string()});
                }
            }
        }
    }

    // A protected path inside a directory an overlay writes, by spelling.
    for (const writable& w : reached) {
        if (w.via.empty()) continue;  // the roots themselves: exposed_by() asks that
        for (const protected_path& p : paths) {
            if (is_within(p.path, w.path) || inside_pattern(w.path, p.path)) {
                return p.path.string() + " is written through " + w.via + " (" + w.path.string() +
                       ") inside " + w.root.string() + ", which the command could write, and " +
                       p.why;
            }
        }
    }

    // And by filesystem: what each reached directory makes writable, as filesystem regions.
    struct region {
        location where;
        std::string shown_at;
        fs::path root;
    };
    std::vector<region> regions;
    for (const writable& w : reached) {
        const std::string named =
            w.via.empty() ? w.path.string() : w.via + " (" + w.path.string() + ")";
        if (auto where = locate(w.path, mounts); where && !where->read_only) {
            regions.push_back({*where, named, w.root});
        }
        for (const mount_entry& mount : mounts) {
            if (is_within(mount.point, w.path) && mount.point != w.path && !mount.read_only) {
                regions.push_back({{mount.device, mount.root, false},
                                   mount.point.string() + (w.via.empty() ? "" : " in " + named),
                                   w.root});
            }
        }
    }
    // What a protected path shows: the path itself, every mount beneath it (a file bound onto a
    // library), the image file behind a loop device it lies on, and, where an overlay shows it,
    // the matching directory of each of the overlay's layers (a lower layer's files show through
    // until copied up); and what those show in turn.
    struct shown {
        fs::path path;
        const protected_path* what;
        std::string via;  // empty for the protected path itself
    };
    std::vector<shown> shows;
    for (const protected_path& p : paths) {
        shows.push_back({p.path, &p, {}});
    }
    const auto follow = [&shows](fs::path path, const protected_path& p, std::string via) {
        const bool seen = std::any_of(shows.begin(), shows.end(), [&](const shown& s) {
            return s.path == path && s.what == &p;
        });
        if (!seen) shows.push_back({std::move(path), &p, std::move(via)});
    };
    std::map<std::string, loop_image> loop_images;  // by device, read once
    for (std::size_t i = 0; i < shows.size(); ++i) {
        if (shows.size() > paths.size() + most_followed) {
            return shows[i].what->path.string() + " shows more than " +
                   std::to_string(most_followed) +
                   " other places through mounts; cordon does not follow them all";
        }
        const shown current = shows[i];
        const protected_path& p = *current.what;
        const std::string last = current.path.filename().string();
        const bool pattern = !last.empty() && last.back() == '*';
        const auto where = locate(pattern ? current.path.parent_path() : current.path, mounts);
        if (!where) continue;
        const fs::path within = pattern ? where->within / last : where->within;
        for (const region& r : regions) {
            if (r.where.device != where->device) continue;
            const bool exposed = pattern ? is_within(where->within, r.where.within) ||
                                               inside_pattern(r.where.within, within)
                                         : is_within(within, r.where.within);
            if (!exposed) continue;
            if (current.via.empty()) {
                return p.path.string() + " is reachable through " + r.shown_at + " inside " +
                       r.root.string() +
                       " (the same directory, mounted there), which the command could write, "
                       "and " +
                       p.why;
            }
            return p.path.string() + " shows " + current.via + " (" + current.path.string() +
                   "), which the command could write through " + r.shown_at + " inside " +
                   r.root.string() + ", and " + p.why;
        }
        if (pattern) continue;
        for (const mount_entry& mount : mounts) {
            if (mount.point != current.path && is_within(mount.point, current.path)) {
                follow(mount.point, p, "the mount at " + mount.point.string());
            }
        }
        const mount_entry* shown_by = showing(current.path, mounts);
        if (shown_by == nullptr) continue;
        auto image = loop_images.find(shown_by->device);
        if (image == loop_images.end()) {
            image =
                loop_images.emplace(shown_by->device, loop_backing_file(shown_by->device)).first;
        }
        if (const auto* unknown = std::get_if<std::string>(&image->second)) {
            return p.path.string() + " lies on the mount at " + shown_by->point.string() +
                   ", and " + *unknown;
        }
        if (const auto& backing = std::get<std::optional<fs::path>>(image->second)) {
            follow(*backing, p,
                   "the image behind the loop device of the mount at " + shown_by->point.string());
        }
        if (is_fuse(shown_by->type)) {
            return p.path.string() + " lies on the " + shown_by->type + " filesystem at " +
                   shown_by->point.string() +
                   ", whose daemon decides what it shows; cordon cannot tell that the command "
                   "cannot write it";
        }
        if (shown_by->type != "overlay") continue;
        std::vector<layer> layers;
        if (auto unplaced =
                overlay_layers(*shown_by, within_mount(current.path, *shown_by), true, layers)) {
            return p.path.string() + " is shown by the overlay at " + shown_by->point.string() +
                   ", which " + *unplaced;
        }
        for (layer& each : layers) {
            if (each.is == layer::kind::work) continue;  // shows nothing
            follow(std::move(each.path), p,
                   "the " + std::string(each.name()) + " of the overlay at " +
                       shown_by->point.string());
        }
    }
    return std::nullopt;
}

}  // namespace cordon::sandbox
