// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "proxy/resolver.hpp"

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>

namespace cordon::proxy {

namespace {

class getaddrinfo_resolver final : public resolver {
public:
    void async_resolve(const boost::asio::any_io_executor& executor, const std::string& name,
                       completion done) override {
        using boost::asio::ip::tcp;
        auto lookup = std::make_shared<tcp::resolver>(executor);
        lookup->async_resolve(
            name, "", tcp::resolver::numeric_service,
            [lookup, done = std::move(done)](const boost::system::error_code& error,
                                             const tcp::resolver::results_type& found) {
                if (error) {
                    done(std::string("cannot be resolved"));
                    return;
                }
                address_list addresses;
                for (const auto& entry : found) {
                    const auto address = entry.endpoint().address();
                    if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
                        addresses.push_back(address);
                    }
                }
                if (addresses.empty()) {
                    done(std::string("cannot be resolved"));
                    return;
                }
                done(std::move(addresses));
            });
    }
};

}  // namespace

std::shared_ptr<resolver> system_resolver() {
    return std::make_shared<getaddrinfo_resolver>();
}

}  // namespace cordon::proxy
