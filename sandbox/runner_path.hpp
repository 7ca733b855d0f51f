// Where the runners come from. A runner runs before any confinement, possibly as root, and the
// next cordon process will run it again: it must come from a place no confined command can write.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace cordon::sandbox {

// Why `path` cannot be trusted as a runner (empty when it can): it and every directory above it
// must be owned by root and writable by nobody else, and it must be an executable regular file.
// `path` must be canonical (symlinks already resolved).
[[nodiscard]] std::string untrusted_because(const std::filesystem::path& path);

// Searches PATH's absolute entries, then /usr/local/bin, /usr/bin and /bin, for `name`, keeping
// only a candidate for which untrusted_because() is empty: a bwrap in an active virtualenv's
// bin/, in the current directory or in any directory a user can write is never picked. Empty
// when none qualifies; `skipped` then says what was found and why it was passed over.
[[nodiscard]] std::filesystem::path find_trusted_executable(std::string_view name,
                                                            std::string* skipped = nullptr);

// cordon-landlock beside the running executable (/proc/self/exe), never found through PATH or an
// environment variable.
[[nodiscard]] std::filesystem::path default_launcher_path();

}  // namespace cordon::sandbox
