// RegistryBook: providers per service with session ownership, subscribers, and what a dropped
// session (a provider or consumer whose connection died) changes — exact lists every time.
#include "embedded/registry_book.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using wheelbeat::registry::RegistryBook;
using wheelbeat::registry::RegistryChange;
using wheelbeat::registry::SessionId;
using Urls = std::vector<std::string>;
using Sessions = std::vector<SessionId>;

namespace {
const std::string kA = "wheelbeat://10.0.0.1:20880/greeter";
const std::string kB = "wheelbeat://10.0.0.2:20880/greeter";
const std::string kC = "wheelbeat://10.0.0.3:20880/billing";
}  // namespace

TEST_SUITE("registry") {

TEST_CASE("registry book: register notifies the subscribers of the service only") {
  RegistryBook book;
  CHECK(book.subscribe(7, "greeter").empty());
  (void)book.subscribe(8, "billing");
  CHECK(book.registerUrl(1, kA) == RegistryChange{"greeter", Urls{kA}, Sessions{7}});
  CHECK(book.registerUrl(2, kB) == RegistryChange{"greeter", Urls{kA, kB}, Sessions{7}});
  CHECK(book.registerUrl(3, kC) == RegistryChange{"billing", Urls{kC}, Sessions{8}});
  CHECK(book.subscribe(9, "greeter") == Urls{kA, kB});
  CHECK(book.urlCount() == 3);
}

TEST_CASE("registry book: registering twice is no change") {
  RegistryBook book;
  CHECK(book.registerUrl(1, kA).has_value());
  CHECK_FALSE(book.registerUrl(1, kA).has_value());
  CHECK(book.unregisterUrl(1, kA) == RegistryChange{"greeter", Urls{}, Sessions{}});
  CHECK(book.providers("greeter").empty());
}

TEST_CASE("registry book: only an owner unregisters and the last owner removes the url") {
  RegistryBook book;
  (void)book.registerUrl(1, kA);
  CHECK_FALSE(book.unregisterUrl(2, kA).has_value());  // not its url
  (void)book.registerUrl(2, kA);                       // the provider reconnected as session 2
  CHECK_FALSE(book.unregisterUrl(1, kA).has_value());  // still owned by 2
  CHECK(book.providers("greeter") == Urls{kA});
  CHECK(book.unregisterUrl(2, kA).has_value());
  CHECK(book.urlCount() == 0);
}

TEST_CASE("registry book: a dropped provider session removes its urls") {
  RegistryBook book;
  (void)book.subscribe(9, "greeter");
  (void)book.subscribe(9, "billing");
  (void)book.registerUrl(1, kA);
  (void)book.registerUrl(1, kC);
  (void)book.registerUrl(2, kB);
  const auto changes = book.dropSession(1);
  CHECK(changes == std::vector<RegistryChange>{{"billing", Urls{}, Sessions{9}},
                                               {"greeter", Urls{kB}, Sessions{9}}});
  CHECK(book.dropSession(1).empty());  // already gone
}

TEST_CASE("registry book: a reconnected provider survives the drop of its old session") {
  RegistryBook book;
  (void)book.subscribe(9, "greeter");
  (void)book.registerUrl(1, kA);
  CHECK_FALSE(book.registerUrl(2, kA).has_value());
  CHECK(book.dropSession(1).empty());
  CHECK(book.providers("greeter") == Urls{kA});
}

TEST_CASE("registry book: a dropped consumer session ends its subscriptions") {
  RegistryBook book;
  (void)book.subscribe(9, "greeter");
  (void)book.subscribe(10, "greeter");
  CHECK(book.dropSession(9).empty());
  CHECK(book.subscribers("greeter") == Sessions{10});
  book.unsubscribe(10, "greeter");
  CHECK(book.subscribers("greeter").empty());
  CHECK(book.registerUrl(1, kA) == RegistryChange{"greeter", Urls{kA}, Sessions{}});
}

TEST_CASE(
    "registry book: a session that is both provider and subscriber is not told of its own drop") {
  RegistryBook book;
  (void)book.subscribe(1, "greeter");
  (void)book.subscribe(2, "greeter");
  (void)book.registerUrl(1, kA);
  CHECK(book.dropSession(1) == std::vector<RegistryChange>{{"greeter", Urls{}, Sessions{2}}});
}

}  // TEST_SUITE("registry")
