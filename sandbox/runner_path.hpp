// Where the runners come from. A runner runs before any confinement, possibly as root, and the
// next cordon process will run it again: it must come from a place no confined command can write.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sandbox {

// Why `path` cannot be trusted as a runner (empty when it can): it and every directory above it
// must be owned by root and writable by nobody else, and it must be an executable regular file.
// `path` must be canonical (symlinks already resolved).
[[nodiscard]] std::string untrusted_because(const std::filesystem::path& path);

// The only directories runners (and the programs cordon itself names: `true` for probes, `bash`
// for `cordon run -c`) are taken from: /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin,
// /sbin, /bin, canonical and de-duplicated. A fixed set, so that no PATH of any later process can
// point somewhere else, and every one of them is protected from workspace-write runs.
[[nodiscard]] const std::vector<std::filesystem::path>& trusted_directories();

// Looks for `name` in trusted_directories(), in the order PATH lists them (the rest after, in
// the order above), keeping only a candidate for which untrusted_because() is empty: a bwrap in
// an active virtualenv's bin/, in a home directory or in any directory a user can write is never
// picked. Empty when none qualifies; `skipped` then says what was passed over and why.
[[nodiscard]] std::filesystem::path find_trusted_executable(std::string_view name,
                                                            std::string* skipped = nullptr);

// cordon-landlock beside the running executable (/proc/self/exe), never found through PATH or an
// environment variable.
[[nodiscard]] std::filesystem::path default_launcher_path();

}  // namespace cordon::sandbox
