// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The verdict cache: a file in /dev/shm that decides which sandbox rung runs. Properties: a file
// is adopted only when it is exactly the format line, the key and an empty line, then the body;
// a body that parses as a verdict is written back (to_text) as text that parses to the same
// verdict and is written again identically; every rung keeps its kind and its ladder order.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sandbox/verdict_cache.hpp"
#include "tests/fuzz/property.hpp"
#include "tests/fuzz/scratch.hpp"

using namespace cordon::sandbox;

namespace {

std::vector<rung_report> ladder() {
    rung_report bwrap;
    bwrap.kind = backend_kind::bwrap;
    bwrap.runner = "/usr/bin/bwrap";
    rung_report landlock;
    landlock.kind = backend_kind::landlock;
    landlock.runner = "/usr/libexec/cordon-landlock";
    return {bwrap, landlock};
}

bool same(const cached_verdict& a, const cached_verdict& b) {
    if (a.probed_at != b.probed_at || a.launcher.probed != b.launcher.probed ||
        a.launcher.abi != b.launcher.abi || a.launcher.reason != b.launcher.reason ||
        a.rungs.size() != b.rungs.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.rungs.size(); ++i) {
        const rung_report& x = a.rungs[i];
        const rung_report& y = b.rungs[i];
        if (x.kind != y.kind || x.state != y.state || x.level != y.level ||
            x.landlock_abi != y.landlock_abi || x.bind_fd != y.bind_fd || x.reason != y.reason) {
            return false;
        }
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    const bool through_file = in.ConsumeBool();
    const std::string text = in.ConsumeRemainingBytesAsString();

    std::string body = text;
    if (through_file) {
        static const auto cache = [] {
            auto opened = verdict_cache::open(cordon::fuzz::scratch_directory() / "verdicts");
            CORDON_FUZZ_CHECK(std::holds_alternative<verdict_cache>(opened));
            return std::get<verdict_cache>(std::move(opened));
        }();
        const std::string key = "boot 1\neuid 1000\nlandlock 4\n";
        cordon::fuzz::write_file(cordon::fuzz::scratch_directory() / "verdicts" / "ladder", text);
        std::string stale;
        const auto loaded = cache.load("ladder", key, &stale);
        if (!loaded) {
            CORDON_FUZZ_CHECK(!stale.empty());
            return 0;
        }
        CORDON_FUZZ_CHECK(text == "cordon-verdict 1\n" + key + "\n" + *loaded);
        body = *loaded;
    }

    const auto verdict = cached_verdict::parse(body, ladder());
    if (!verdict) return 0;
    CORDON_FUZZ_CHECK(verdict->rungs.size() == 2);
    CORDON_FUZZ_CHECK(verdict->rungs[0].kind == backend_kind::bwrap &&
                      verdict->rungs[1].kind == backend_kind::landlock);
    const std::string written = verdict->to_text();
    const auto reread = cached_verdict::parse(written, ladder());
    CORDON_FUZZ_CHECK(reread.has_value());
    CORDON_FUZZ_CHECK(reread->to_text() == written);
    // Apart from line breaks in a reason, which to_text() writes as spaces, nothing changes.
    if (verdict->launcher.reason.find('\r') == std::string::npos) {
        bool plain = true;
        for (const auto& rung : verdict->rungs)
            plain = plain && rung.reason.find('\r') == std::string::npos;
        if (plain) CORDON_FUZZ_CHECK(same(*verdict, *reread));
    }
    (void)verdict->current(std::chrono::seconds(1000));
    return 0;
}
