// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A value, or why there is none: for cordon's private code, which decides on a failure's kind and
// shows its message to people.
//
//   enum class refusal_kind { denied, private_address, ... };
//   base::result<route, refusal_kind> decided = decide(...);
//   if (!decided) {
//       if (decided.kind() == refusal_kind::denied) ...;  // code branches on the kind
//       reply(decided.message());                        // people read the message
//   }
//
// A reworded message then changes what people read and nothing else. (std::expected is C++23,
// and tl::expected is not in Debian 12; this is the part of them cordon uses.)
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace cordon::base {

template <typename Kind>
struct failure {
    Kind kind;
    std::string message;  // one line, for people: never compared by code
};

// A failure of `kind`, for a function returning result<T, Kind> or std::optional<failure<Kind>>.
template <typename Kind>
[[nodiscard]] failure<Kind> fail(Kind kind, std::string message) {
    return failure<Kind>{kind, std::move(message)};
}

template <typename T, typename Kind>
class [[nodiscard]] result {
public:
    // Implicit both ways, so that a function returns its value or its failure as they are.
    result(T value) : held_(std::in_place_index<0>, std::move(value)) {}
    result(base::failure<Kind> why) : held_(std::in_place_index<1>, std::move(why)) {}

    [[nodiscard]] bool ok() const noexcept { return held_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    // The value; asking a failed result for it is a programmer's error (std::logic_error).
    [[nodiscard]] T& value() & { return std::get<0>(checked(true)); }
    [[nodiscard]] const T& value() const& { return std::get<0>(checked(true)); }
    // Moved out by value: a reference into a temporary result would dangle.
    [[nodiscard]] T value() && { return std::get<0>(std::move(checked(true))); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    // Why there is no value; asking a result that holds one is a programmer's error.
    [[nodiscard]] const base::failure<Kind>& error() const& { return std::get<1>(checked(false)); }
    [[nodiscard]] Kind kind() const { return error().kind; }
    [[nodiscard]] const std::string& message() const { return error().message; }

private:
    std::variant<T, base::failure<Kind>>& checked(bool want_value) {
        if (ok() != want_value)
            throw std::logic_error(want_value ? "result: no value" : "result: no failure");
        return held_;
    }
    const std::variant<T, base::failure<Kind>>& checked(bool want_value) const {
        if (ok() != want_value)
            throw std::logic_error(want_value ? "result: no value" : "result: no failure");
        return held_;
    }

    std::variant<T, base::failure<Kind>> held_;
};

}  // namespace cordon::base
