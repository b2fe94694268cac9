#include "format/error.h"

#include <sstream>

namespace wgx::format {

namespace {
std::string compose(const ErrorSite& site, const std::string& detail, const std::string& path) {
  std::ostringstream os;
  if (!path.empty()) os << "'" << path << "': ";
  os << site.section << " section";
  if (!site.item.empty()) os << ", " << site.item;
  if (!site.field.empty()) os << ", field '" << site.field << "'";
  if (site.offset) os << " (byte " << *site.offset << ")";
  os << ": " << detail;
  return os.str();
}
}  // namespace

FormatError::FormatError(ErrorSite site, std::string detail, std::string path)
    : std::runtime_error(compose(site, detail, path)),
      site_(std::move(site)),
      detail_(std::move(detail)),
      path_(std::move(path)) {}

}  // namespace wgx::format
