// The document parser: nlohmann's, with a callback that sees every key, so that a key written
// twice in one object is an error rather than silently "last wins".
#include "reader.h"

#include <set>

namespace wheelbeat::config::detail {
namespace {

// Where the parser is: one frame per open object or array, each with the child being read.
class DuplicateFinder {
public:
  explicit DuplicateFinder(std::vector<std::string>& found) : found_(found) {}

  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start: open(false); break;
      case Json::parse_event_t::array_start: open(true); break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end: frames_.pop_back(); break;
      case Json::parse_event_t::key: key(parsed.get_ref<const std::string&>()); break;
      case Json::parse_event_t::value: enterChild(); break;
    }
    return true;  // keep everything: the document is read as usual
  }

private:
  struct Frame {
    bool array = false;
    std::size_t nextIndex = 0;
    std::string child;  // the key or index being read
    std::set<std::string> keys;
    std::set<std::string> reported;
  };

  void enterChild() {
    if (!frames_.empty() && frames_.back().array) {
      frames_.back().child = std::to_string(frames_.back().nextIndex++);
    }
  }
  void open(bool array) {
    enterChild();
    frames_.push_back(Frame{array, 0, {}, {}, {}});
  }
  void key(const std::string& name) {
    Frame& top = frames_.back();
    top.child = name;
    if (top.keys.insert(name).second || !top.reported.insert(name).second) return;
    std::string pointer;
    for (const Frame& f : frames_) pointer = childPointer(pointer, f.child);
    found_.push_back(std::move(pointer));
  }

  std::vector<std::string>& found_;
  std::vector<Frame> frames_;
};

}  // namespace

Json parseDocument(std::string_view text, std::vector<ConfigError>& duplicates) {
  std::vector<std::string> pointers;
  Json document = Json::parse(text, DuplicateFinder(pointers));
  for (const std::string& pointer : pointers) {
    const Json::json_pointer at(pointer);
    duplicates.push_back({pointer, dumped(document.contains(at) ? document.at(at) : Json()),
                          "a key written once in its object"});
  }
  return document;
}

}  // namespace wheelbeat::config::detail
