// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// base::result: a value or a failure of a kind, the kind what code decides on and the message
// what people read; asking a result for what it does not hold is a programmer's error.
#include "base/result.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace cordon::base {
namespace {

enum class parse_kind { empty, not_a_number };

result<int, parse_kind> parse_digit(std::string_view text) {
    if (text.empty()) return fail(parse_kind::empty, "no text");
    if (text.size() != 1 || text[0] < '0' || text[0] > '9') {
        return fail(parse_kind::not_a_number, "\"" + std::string(text) + "\" is not a digit");
    }
    return text[0] - '0';
}

TEST(Result, HoldsTheValue) {
    const auto parsed = parse_digit("7");
    ASSERT_TRUE(parsed.ok());
    EXPECT_TRUE(static_cast<bool>(parsed));
    EXPECT_EQ(parsed.value(), 7);
    EXPECT_EQ(*parsed, 7);
    EXPECT_THROW((void)parsed.error(), std::logic_error);
}

TEST(Result, HoldsTheFailuresKindAndMessage) {
    const auto empty = parse_digit("");
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.kind(), parse_kind::empty);
    EXPECT_EQ(empty.message(), "no text");
    const auto word = parse_digit("seven");
    ASSERT_FALSE(word);
    EXPECT_EQ(word.error().kind, parse_kind::not_a_number);
    EXPECT_EQ(word.error().message, "\"seven\" is not a digit");
    EXPECT_THROW((void)word.value(), std::logic_error);
}

TEST(Result, MovesAValueThatOnlyMoves) {
    result<std::unique_ptr<int>, parse_kind> made = std::make_unique<int>(3);
    ASSERT_TRUE(made.ok());
    EXPECT_EQ(*made.value(), 3);
    const std::unique_ptr<int> taken = std::move(made).value();
    EXPECT_EQ(*taken, 3);
}

}  // namespace
}  // namespace cordon::base
