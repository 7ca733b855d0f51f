// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The configuration file (TOML, toml++): whoever can write ~/.config/cordon/config.toml sets the
// sandbox's defaults, and a misspelt key must never drop a setting silently. The fuzzer's bytes
// are the one file cordon reads (CORDON_CONFIG_DIRS names its directory), loaded without a
// profile and with one. Properties: loading never throws or crashes; a refusal is one line that
// names the file; what a file sets is in the bounds the flags have.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <variant>

#include "cli/config_file.hpp"
#include "cli/options.hpp"
#include "tests/fuzz/property.hpp"
#include "tests/fuzz/scratch.hpp"

using namespace cordon::cli;

namespace {

void check(const std::variant<loaded_config, std::string>& loaded) {
    if (const auto* refusal = std::get_if<std::string>(&loaded)) {
        CORDON_FUZZ_CHECK(!refusal->empty());
        CORDON_FUZZ_CHECK(refusal->find("config.toml") != std::string::npos);
        return;
    }
    const config_values& values = std::get<loaded_config>(loaded).values;
    if (values.timeout) {
        CORDON_FUZZ_CHECK(values.timeout->value.count() >= 1 &&
                          values.timeout->value <= most_timeout);
    }
    if (values.approval_timeout) CORDON_FUZZ_CHECK(values.approval_timeout->value.count() >= 1);
    if (values.max_output) {
        CORDON_FUZZ_CHECK(values.max_output->value >= 1 && values.max_output->value <= most_output);
    }
    if (values.max_processes) CORDON_FUZZ_CHECK(values.max_processes->value <= most_processes);
    if (values.max_memory) {
        CORDON_FUZZ_CHECK(values.max_memory->value == 0 ||
                          values.max_memory->value >= least_memory);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool configured = [] {
        return ::setenv("CORDON_CONFIG_DIRS", cordon::fuzz::scratch_directory().c_str(), 1) == 0;
    }();
    CORDON_FUZZ_CHECK(configured);
    cordon::fuzz::write_file(cordon::fuzz::scratch_directory() / "config.toml",
                             std::string_view(reinterpret_cast<const char*>(data), size));
    check(load_config(""));
    check(load_config("ci"));
    return 0;
}
