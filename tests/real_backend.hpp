// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The real backends a suite runs a command under, with the Landlock rung's two paths as values of
// their own: the rules applied in the forked child (the default) or by exec'ing cordon-landlock
// (executor_options::landlock_in_child = false; CORDON_LANDLOCK_VIA_LAUNCHER=1 for a cordon
// process). A suite parametrised over all_real_backends() runs the launcher path exactly where it
// changes the path, instead of running the whole suite a second time.
//
// Header-only and free of cordon_runtime, so that every suite can include it.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>

#include "sandbox/local_provider.hpp"
#include "support.hpp"

namespace cordon::test {

enum class real_backend { bwrap, landlock, landlock_via_launcher };

[[nodiscard]] constexpr sandbox::backend_choice choice_of(real_backend backend) {
    return backend == real_backend::bwrap ? sandbox::backend_choice::bwrap
                                          : sandbox::backend_choice::landlock;
}

// The value of executor_options::landlock_in_child that takes `backend`'s path.
[[nodiscard]] constexpr bool landlock_in_child(real_backend backend) {
    return backend != real_backend::landlock_via_launcher;
}

// The --backend value a cordon process is given for `backend`.
[[nodiscard]] constexpr std::string_view backend_flag(real_backend backend) {
    return backend == real_backend::bwrap ? "bwrap" : "landlock";
}

// Sends every cordon process the test starts while it lives down `backend`'s path (through the
// environment they inherit: CORDON_LANDLOCK_VIA_LAUNCHER).
class scoped_backend_path {
public:
    explicit scoped_backend_path(real_backend backend)
        : env_("CORDON_LANDLOCK_VIA_LAUNCHER", landlock_in_child(backend) ? "0" : "1") {}

private:
    scoped_env env_;
};

[[nodiscard]] constexpr std::string_view to_string(real_backend backend) {
    switch (backend) {
        case real_backend::bwrap:
            return "bwrap";
        case real_backend::landlock:
            return "landlock";
        case real_backend::landlock_via_launcher:
            return "landlock_via_launcher";
    }
    return "?";
}

inline void PrintTo(real_backend backend, std::ostream* out) {
    *out << to_string(backend);
}

inline std::string real_backend_name(const ::testing::TestParamInfo<real_backend>& info) {
    return std::string(to_string(info.param));
}

inline auto all_real_backends() {
    return ::testing::Values(real_backend::bwrap, real_backend::landlock,
                             real_backend::landlock_via_launcher);
}

inline constexpr real_backend every_real_backend[] = {real_backend::bwrap, real_backend::landlock,
                                                      real_backend::landlock_via_launcher};

// The policy rules a suite runs under on `backend`: the defaults. (The Landlock rung keeps
// protected names as bwrap does, by judging what a run leaves: no gap to accept.)
[[nodiscard]] inline sandbox::path_rules rules_for(real_backend) {
    return {};
}
[[nodiscard]] inline sandbox::path_rules rules_for(sandbox::backend_choice) {
    return {};
}

}  // namespace cordon::test
