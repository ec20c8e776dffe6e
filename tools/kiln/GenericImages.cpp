//===- GenericImages.cpp - Which variants get a generic image -------------===//

#include "tools/kiln/GenericImages.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace kiln::driver {

std::vector<std::string>
namesInConditions(const std::vector<std::string> &conditions) {
  std::vector<std::string> names;
  for (llvm::StringRef text : conditions) {
    bool afterParen = false;
    while (!text.empty()) {
      char c = text.front();
      if (c == '(' || c == ')' || llvm::isSpace(c)) {
        afterParen = c == '(';
        text = text.drop_front();
        continue;
      }
      size_t end = text.find_first_of("() \t\n");
      llvm::StringRef token = text.take_front(end);
      text = text.drop_front(token.size());
      // The token after '(' is the operator (`cdiv`, `min`, `neg`, `&&`).
      bool isName = !afterParen && (llvm::isAlpha(token.front()) ||
                                    token.front() == '_');
      afterParen = false;
      if (isName && !llvm::is_contained(names, token.str()))
        names.push_back(token.str());
    }
  }
  return names;
}

std::vector<int64_t>
conditionGroup(const std::vector<std::pair<std::string, int64_t>> &constValues,
               const std::vector<std::string> &read) {
  std::vector<int64_t> group;
  for (const auto &[name, value] : constValues)
    if (llvm::is_contained(read, name))
      group.push_back(value);
  return group;
}

bool isGenericImage(const CodeObject &object) {
  // Tensor maps are assumptions too (their requirements are checked at
  // each launch): a fast path whose parameters are all promised may have
  // nothing else.
  auto empty = [](const std::string &text, bool array) {
    if (text.empty())
      return true;
    nlohmann::json j = nlohmann::json::parse(text, nullptr,
                                             /*allow_exceptions=*/false);
    return (array ? j.is_array() : j.is_object()) && j.empty();
  };
  return empty(object.assumesJson, false) &&
         empty(object.tensorMapsJson, true);
}

int64_t sharedBytesOf(const std::vector<CodeObject> &objects) {
  int64_t most = 0;
  for (const CodeObject &o : objects) {
    nlohmann::json j = nlohmann::json::parse(o.resourcesJson, nullptr,
                                             /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("shared_bytes") &&
        j["shared_bytes"].is_number_integer())
      most = std::max(most, j["shared_bytes"].get<int64_t>());
  }
  return most;
}

std::vector<std::vector<size_t>>
uncoveredGroups(const std::vector<CompiledVariant> &variants) {
  std::vector<std::vector<int64_t>> order; // groups by first appearance
  std::map<std::vector<int64_t>, std::vector<size_t>> kept;
  std::map<std::vector<int64_t>, bool> covered;
  for (size_t i = 0; i < variants.size(); ++i) {
    const CompiledVariant &v = variants[i];
    if (!covered.count(v.group)) {
      order.push_back(v.group);
      covered[v.group] = false;
    }
    if (!v.kept)
      continue;
    kept[v.group].push_back(i);
    covered[v.group] = covered[v.group] || v.hasGeneric;
  }
  std::vector<std::vector<size_t>> result;
  for (const std::vector<int64_t> &group : order) {
    if (covered[group] || kept[group].empty())
      continue;
    std::vector<size_t> tries = kept[group];
    llvm::sort(tries, [&](size_t a, size_t b) {
      if (variants[a].sharedBytes != variants[b].sharedBytes)
        return variants[a].sharedBytes < variants[b].sharedBytes;
      return variants[a].variant < variants[b].variant;
    });
    result.push_back(std::move(tries));
  }
  return result;
}

} // namespace kiln::driver
