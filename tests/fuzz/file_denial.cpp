// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The file walls' denial read from a command's stderr (classify/file_denial.hpp): bytes the command
// controls entirely. The first bytes choose the walls (mode, backend); the rest is the stderr.
// Properties: every name is non-empty, at most PATH_MAX, and written in the line it came from;
// the evidence's line is the start of a line of the input, at most 512 bytes; a refuted dialect
// has no evidence; and reading twice gives the same answer.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classify/file_denial.hpp"
#include "tests/fuzz/property.hpp"

namespace {

using namespace cordon;
using namespace cordon::classify;

// A host that allows everything and has nothing on it, and no answer below /net: the answers
// depend on the input alone, and no path of the real host is asked about.
class open_host : public host_view {
public:
    std::optional<host_entry> resolve(const std::filesystem::path& path) const override {
        if (!path.is_absolute() || path.string().starts_with("/net/")) return std::nullopt;
        return host_entry{path, false};
    }
    bool allows(const std::filesystem::path&, int) const override { return true; }
    bool read_only(const std::filesystem::path&) const override { return false; }
    bool directory(const std::filesystem::path&) const override { return false; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    file_walls walls;
    walls.mode = in.ConsumeBool() ? sandbox::sandbox_mode::read_only
                                  : sandbox::sandbox_mode::workspace_write;
    walls.backend =
        in.ConsumeBool() ? sandbox::backend_kind::bwrap : sandbox::backend_kind::landlock;
    walls.writable = {"/nonexistent-cordon-fuzz/ws", "/tmp"};
    walls.kept = {"/nonexistent-cordon-fuzz/ws/.git", "/nonexistent-cordon-fuzz/ws/.git/hooks"};
    walls.hidden = {"/nonexistent-cordon-fuzz/secret"};
    walls.workdir = "/nonexistent-cordon-fuzz/ws";  // asked of open_host only
    const std::string text = in.ConsumeRemainingBytesAsString();
    const open_host host;
    const std::vector<std::string> dialect{"read-only file system", "permission denied",
                                           "attempt to write a readonly database"};

    const std::string_view stream(text);
    std::size_t start = 0;
    while (start < stream.size()) {
        std::size_t end = stream.find('\n', start);
        if (end == std::string_view::npos) end = stream.size();
        const std::string_view line = stream.substr(start, end - start);
        lookup_budget budget;
        const std::vector<std::string> names = named_paths(line, walls.workdir, host, budget);
        CORDON_FUZZ_CHECK(names.size() <= 16);
        for (const std::string& name : names) {
            CORDON_FUZZ_CHECK(!name.empty() && name.size() <= 4096);
            CORDON_FUZZ_CHECK(line.find(name) != std::string_view::npos);
        }
        start = end + 1;
    }

    const file_reading read = read_file_denial(text, walls, dialect, host);
    if (read.evidence) {
        CORDON_FUZZ_CHECK(!read.refuted);
        CORDON_FUZZ_CHECK(read.evidence->line.size() <= 512);
        CORDON_FUZZ_CHECK(!read.evidence->path.empty());
        CORDON_FUZZ_CHECK(text.find(read.evidence->line) != std::string::npos);
    }
    CORDON_FUZZ_CHECK(read.dialect_line.size() <= 512);
    const file_reading again = read_file_denial(text, walls, dialect, host);
    CORDON_FUZZ_CHECK(again.refuted == read.refuted && again.dialect_line == read.dialect_line &&
                      again.evidence.has_value() == read.evidence.has_value());
    return 0;
}
