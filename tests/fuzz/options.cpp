// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The duration and size parsers of cordon's options and configuration (cli/options.hpp): a value
// typed by a person or written in a file. Properties: a value accepted is in its range; the
// shortest form cordon prints it in (duration_text, size_text: what `cordon config show` prints)
// reads back as the same value; a bad value is cordon's own bad_option_value, never another
// exception. The same text goes through base::parse_number: plain decimal, whole, or nothing.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/number.hpp"
#include "cli/config_file.hpp"
#include "cli/options.hpp"
#include "tests/fuzz/property.hpp"

using namespace cordon::cli;
using std::chrono::milliseconds;

namespace {

value_rule rule() {
    return value_rule{"cordon run", [](const std::string& text) { return "bad " + text; }, true};
}

// The value `text` gives the option `which`, or nullopt when it is refused; aborts when the
// refusal is not cordon's own.
struct parsed {
    std::optional<milliseconds> duration;
    std::optional<std::uint64_t> size;
};
std::optional<parsed> parse(int which, const std::string& text) {
    CLI::App app;
    parsed out;
    switch (which) {
        case 0:
            add_duration_option(app, "--timeout", out.duration, "", rule(), most_timeout);
            break;
        case 1:
            add_duration_option(app, "--approval-timeout", out.duration, "", rule());
            break;
        case 2:
            app.add_option("--max-output", out.size)
                ->transform(size_value(rule(), 1, most_output, false));
            break;
        case 3:
            app.add_option("--max-memory", out.size)
                ->transform(size_value(rule(), least_memory,
                                       std::numeric_limits<std::uint64_t>::max(), true));
            break;
        default:
            app.add_option("--max-processes", out.size)
                ->transform(count_value(rule(), most_processes, true));
            break;
    }
    std::vector<std::string> args{text, app.get_options().back()->get_name()};
    try {
        app.parse(args);
    } catch (const bad_option_value&) {
        return std::nullopt;
    } catch (const CLI::ParseError& error) {
        // The value read as an option of its own ("--x"), or an empty one: CLI11's word.
        CORDON_FUZZ_CHECK(text.empty() || text.front() == '-');
        return std::nullopt;
    }
    return out;
}

}  // namespace

// base::parse_number, the parser of the numbers cordon reads but does not write (/proc, cgroup
// files, a cached verdict): the whole text, plain decimal, or nothing.
void check_plain_number(const std::string& text) {
    const auto digits = [](std::string_view part) {
        return !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (const auto value = cordon::base::parse_number<std::uint64_t>(text)) {
        CORDON_FUZZ_CHECK(digits(text));
        CORDON_FUZZ_CHECK(cordon::base::parse_number<std::uint64_t>(std::to_string(*value)) ==
                          value);
    }
    if (const auto value = cordon::base::parse_number<int>(text)) {
        CORDON_FUZZ_CHECK(digits(text.starts_with('-') ? text.substr(1) : text));
        CORDON_FUZZ_CHECK(cordon::base::parse_number<int>(std::to_string(*value)) == value);
    }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    const int which = in.ConsumeIntegralInRange<int>(0, 4);
    const std::string text = in.ConsumeRemainingBytesAsString();
    check_plain_number(text);
    const auto got = parse(which, text);
    if (!got) return 0;
    if (which <= 1) {
        if (!got->duration) {
            CORDON_FUZZ_CHECK(text.empty());
            return 0;
        }
        const milliseconds value = *got->duration;
        CORDON_FUZZ_CHECK(value.count() >= 1);
        if (which == 0) CORDON_FUZZ_CHECK(value <= most_timeout);
        const auto again = parse(which, duration_text(value));
        CORDON_FUZZ_CHECK(again && again->duration == value);
        return 0;
    }
    if (!got->size) {
        CORDON_FUZZ_CHECK(text.empty());
        return 0;
    }
    const std::uint64_t value = *got->size;
    if (which == 2) CORDON_FUZZ_CHECK(value >= 1 && value <= most_output);
    if (which == 3) CORDON_FUZZ_CHECK(value == 0 || value >= least_memory);
    if (which == 4) CORDON_FUZZ_CHECK(value <= most_processes);
    const std::string shown = which == 4 ? (value == 0 ? "unlimited" : std::to_string(value))
                                         : size_text(value, which == 3);
    const auto again = parse(which, shown);
    CORDON_FUZZ_CHECK(again && again->size == value);
    return 0;
}
