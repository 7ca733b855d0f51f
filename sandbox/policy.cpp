#include "sandbox/policy.hpp"

#include <algorithm>
#include <cstdlib>
#include <system_error>

namespace cordon::sandbox {

namespace fs = std::filesystem;

fs::path canonical_path(const fs::path& path) {
    std::error_code ec;
    fs::path absolute = fs::absolute(path, ec);
    if (ec) absolute = path;
    // realpath(3) resolves component by component, as chdir does: `link/..` is the parent of
    // the link's target.
    fs::path resolved = fs::canonical(absolute, ec);
    if (!ec) return resolved;
    return absolute.lexically_normal();
}

std::vector<fs::path> writable_roots(const sandbox_policy& policy) {
    std::vector<fs::path> roots;
    if (policy.mode != sandbox_mode::workspace_write) return roots;
    auto add = [&roots](const fs::path& candidate) {
        fs::path canonical = canonical_path(candidate);
        if (std::find(roots.begin(), roots.end(), canonical) == roots.end()) {
            roots.push_back(std::move(canonical));
        }
    };
    add(policy.workspace_root);
    add("/tmp");
    if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && *tmpdir == '/') {
        add(tmpdir);
    }
    return roots;
}

}  // namespace cordon::sandbox
