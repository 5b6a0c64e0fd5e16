#include <wheelbeat/dubbo/exception.h>

#include <utility>

namespace wheelbeat::dubbo {

namespace {

std::string orRuntime(std::string className) {
  return className.empty() ? std::string(kRuntimeException) : std::move(className);
}

}  // namespace

ApplicationException::ApplicationException(std::string className, std::string message)
    : std::runtime_error(orRuntime(className) + ": " + message),
      className_(orRuntime(std::move(className))),
      message_(std::move(message)) {}

hessian::Value makeThrowable(std::string_view className, std::string_view message) {
  // Hessian's JavaSerializer lists String and java.lang.* fields first (detailMessage, cause),
  // then the others (stackTrace, suppressedExceptions), each group in declaration order.
  auto def = hessian::makeClassDef(
      className.empty() ? std::string(kRuntimeException) : std::string(className),
      {"detailMessage", "cause", "stackTrace", "suppressedExceptions"});
  auto object = hessian::makeObject(
      std::move(def), {hessian::Value::string(std::string(message)), hessian::Value(),
                       hessian::Value::list(hessian::makeList("[java.lang.StackTraceElement")),
                       hessian::Value::list(hessian::makeList())});
  // Throwable's cause is itself when there is none: a back edge (the object owns nothing new).
  object->values[1] = hessian::Value::backRef(hessian::BackRef(object));
  return hessian::Value::object(std::move(object));
}

ApplicationException describeThrowable(const hessian::Value& throwable) {
  const hessian::Value target =
      throwable.type() == hessian::Type::BackRef ? throwable.asBackRef().lock() : throwable;
  if (target.type() == hessian::Type::Object) {
    const auto& object = *target.asObject();
    const hessian::Value* message = object.field("detailMessage");
    return {object.def ? object.def->name : std::string(),
            message != nullptr && message->type() == hessian::Type::String ? message->asString()
                                                                           : std::string()};
  }
  if (target.type() == hessian::Type::Map) {
    const auto& map = *target.asMap();
    std::string message;
    for (const auto& [k, v] : map.entries) {
      if (k.type() == hessian::Type::String && k.asString() == "detailMessage" &&
          v.type() == hessian::Type::String) {
        message = v.asString();
      }
    }
    return {map.type, std::move(message)};
  }
  return {hessian::typeName(target.type()), std::string()};
}

}  // namespace wheelbeat::dubbo
