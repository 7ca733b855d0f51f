// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What fuzzing found in the CLI (tests/fuzz/, docs/testing.md "Fuzzing"), each kept as a test of
// the class it belongs to; the inputs are in tests/fuzz/corpus/ too.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cli/commands.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::cli {
namespace {

using test::cli_result;
using test::show_with;

// Text on which toml++ 3.3 breaks its own preconditions (cli/toml_hazard.hpp): a table header
// whose key starts with a character no key starts with failed an assertion (cordon died of
// SIGABRT), and a character past ASCII where white space may stand reached an unreachable
// branch (undefined behaviour in every build), also inside a bare value that a quote did not
// turn into a string; a '}' where an array expects a value failed an assertion too. Each is now
// the one line of a refused configuration, exit 2 (fuzz target config_file).
TEST(FuzzFound, TextTomlCannotReadSafelyIsRefusedInOneLine) {
    for (const std::string& text : std::initializer_list<std::string>{
             "[&", "[[[1]]]", "mode = \"read-only\"\n[ \t@x]", "[\n", "[\r\n", "[[ \x01]]",
             "[\xc3\xa9]", "\xc3\xa9 = 1\n", "env_keep = [ \"A\",\xc3\xa9 ]\n",
             "mode = \"\"\"a\\\n  \xc3\xa9\"\"\"\n", "mode = \"\"\"a\\ \r\n\xe3\x80\x80\"\"\"\n",
             "timeout = 1 \xef\xbb\xaf\n",
             // A quote inside a bare value opens no string: toml++ scans the value on to its end.
             "deny_reed =2222max+[\"\xd1\x87\xdd\xa1\n", "timeout = 1.\"\xc3\xa9\"\n",
             "timeout = a'\xc3\xa9'\n", "mode = \"a\"\"\xc3\xa9\"\n", "mode = a=b\"\xc3\xa9\"\n",
             "mode = a{\"\xc3\xa9\"}\n",
             // A '}' where an array expects a value.
             std::string("ed =[}\0\0\0] ][\"/x\x02/2", 19), "env_keep = [}\n",
             "env_keep = [\"A\",\n}\n", "env_keep = [ # c\n }\n", "x = [[}]]\n"}) {
        SCOPED_TRACE(text);
        const cli_result result = show_with(text);
        EXPECT_EQ(result.exit_code, exit_usage) << result.err;
        EXPECT_EQ(result.out, "");
        EXPECT_NE(result.err.find("config.toml:"), std::string::npos) << result.err;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    }
}

// The guard refuses only what toml++ cannot read: headers that start with a key, lines of a
// multi-line array, characters past ASCII in strings and comments, and a byte order mark are
// read as before.
TEST(FuzzFound, WhatTomlReadsSafelyIsReadAsBefore) {
    const cli_result result = show_with(
        "\xef\xbb\xbf# caf\xc3\xa9\nenv_keep = [\n  \"A\", # \xc3\xa9\n]\n"
        "[ profile.\"x\" ]\nmode = \"read-only\"\n[profile.'caf\xc3\xa9']\n"
        "timeout = 5\n[profile.y]\nmode = '''read-only'''\n"
        "env_keep = [\"A\", # }\n  \"B\"]\n",
        {"--profile", "x"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
}

}  // namespace
}  // namespace cordon::cli
