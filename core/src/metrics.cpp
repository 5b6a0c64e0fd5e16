// Histogram, MetricsWriter (validation, merging, format 0.0.4) and MetricsRegistry.
#include <wheelbeat/core/app_metrics.h>
#include <wheelbeat/core/log.h>
#include <wheelbeat/core/metrics.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace wheelbeat::core {

std::string_view metricTypeName(MetricType type) noexcept {
  switch (type) {
    case MetricType::Counter: return "counter";
    case MetricType::Gauge: return "gauge";
    case MetricType::Histogram: return "histogram";
  }
  return "untyped";
}

// ---- Histogram ---------------------------------------------------------------------------------

namespace {

constexpr std::array<std::int64_t, kDurationBucketsSeconds.size()> boundsNs() {
  std::array<std::int64_t, kDurationBucketsSeconds.size()> ns{};
  for (std::size_t i = 0; i < ns.size(); ++i) {
    // std::llround is not constexpr; the bounds are positive, so +0.5 and truncation round to
    // nearest. NOLINTNEXTLINE(bugprone-incorrect-roundings)
    ns[i] = static_cast<std::int64_t>(kDurationBucketsSeconds[i] * 1e9 + 0.5);
  }
  return ns;
}
constexpr auto kBoundsNs = boundsNs();

// The first bucket that can hold a value of bit width w (the bucket of 2^(w-1); of 0 for w = 0).
// Consecutive bounds are at least 2x apart, so [2^(w-1), 2^w) holds at most one bound: a value's
// bucket is this one or the next (bucketOf()).
constexpr std::array<std::uint8_t, 65> firstBuckets() {
  std::array<std::uint8_t, 65> first{};
  for (std::size_t w = 0; w < first.size(); ++w) {
    const std::int64_t low = w == 0 ? 0 : static_cast<std::int64_t>(std::uint64_t{1} << (w - 1));
    std::size_t b = 0;
    while (b < kBoundsNs.size() && kBoundsNs[b] < low) ++b;
    first[w] = static_cast<std::uint8_t>(b);
  }
  return first;
}
constexpr auto kFirstBucket = firstBuckets();

constexpr bool boundsAtLeastTwiceApart() {
  for (std::size_t i = 1; i < kBoundsNs.size(); ++i) {
    if (kBoundsNs[i] < 2 * kBoundsNs[i - 1]) return false;
  }
  return true;
}
static_assert(boundsAtLeastTwiceApart(), "bucketOf() looks at one bound per power of two");

}  // namespace

// One table look-up and one comparison (a binary search over the 16 bounds took ~60
// instructions, recorded several times per heartbeat). `le` is inclusive: a value equal to a
// bound belongs to that bucket.
std::size_t Histogram::bucketOf(std::chrono::nanoseconds value) noexcept {
  const auto v = static_cast<std::uint64_t>(std::max<std::int64_t>(0, value.count()));
  const std::size_t first = kFirstBucket[static_cast<std::size_t>(std::bit_width(v))];
  if (first == kBoundsNs.size()) return first;
  return first + (static_cast<std::int64_t>(v) > kBoundsNs[first] ? 1 : 0);
}

void Histogram::record(std::chrono::nanoseconds value) noexcept {
  const std::int64_t ns = std::max<std::int64_t>(0, value.count());
  counts_[bucketOf(std::chrono::nanoseconds(ns))].fetch_add(1, std::memory_order_relaxed);
  sumNs_.fetch_add(ns, std::memory_order_relaxed);
}

void Histogram::recordSingleWriter(std::chrono::nanoseconds value) noexcept {
  const std::int64_t ns = std::max<std::int64_t>(0, value.count());
  auto bump = [](auto& a, auto by) {
    a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  };
  bump(counts_[bucketOf(std::chrono::nanoseconds(ns))], std::uint64_t{1});
  bump(sumNs_, ns);
}

HistogramSnapshot Histogram::snapshot() const noexcept {
  HistogramSnapshot s;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    s.counts[i] = counts_[i].load(std::memory_order_relaxed);
    // The count is the buckets' sum, so the rendered +Inf bucket never falls below the last
    // finite one when a record() races with this snapshot.
    s.count += s.counts[i];
  }
  s.sum = std::chrono::nanoseconds(sumNs_.load(std::memory_order_relaxed));
  return s;
}

HistogramSnapshot& HistogramSnapshot::operator+=(const HistogramSnapshot& other) noexcept {
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) counts[i] += other.counts[i];
  count += other.count;
  sum += other.sum;
  return *this;
}

std::chrono::nanoseconds HistogramSnapshot::quantile(double q) const noexcept {
  std::uint64_t total = 0;
  for (const std::uint64_t c : counts) total += c;
  if (total == 0) return std::chrono::nanoseconds(0);
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(total);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
    if (counts[i] == 0 || static_cast<double>(seen + counts[i]) < rank) {
      seen += counts[i];
      continue;
    }
    if (i == kBoundsNs.size()) return std::chrono::nanoseconds(kBoundsNs.back());
    const double lower = i == 0 ? 0.0 : static_cast<double>(kBoundsNs[i - 1]);
    const auto upper = static_cast<double>(kBoundsNs[i]);
    const double within = (rank - static_cast<double>(seen)) / static_cast<double>(counts[i]);
    return std::chrono::nanoseconds(std::llround(lower + (upper - lower) * within));
  }
  return std::chrono::nanoseconds(kBoundsNs.back());
}

// ---- MetricsWriter -----------------------------------------------------------------------------

MetricsWriter::MetricsWriter(std::span<const MetricDef> catalogue)
    : catalogue_(catalogue), series_(catalogue.size()) {}

std::size_t MetricsWriter::find(std::string_view name, MetricType type, LabelValues labels) const {
  const auto it = std::find_if(catalogue_.begin(), catalogue_.end(),
                               [&](const MetricDef& m) { return m.name == name; });
  if (it == catalogue_.end()) {
    throw std::invalid_argument(fmt::format("metric {}: not in the catalogue", name));
  }
  if (it->type != type) {
    throw std::invalid_argument(fmt::format("metric {}: written as a {} (expected: {})", name,
                                            metricTypeName(type), metricTypeName(it->type)));
  }
  if (labels.size() != it->labels.size()) {
    throw std::invalid_argument(fmt::format("metric {}: {} label values (expected: {})", name,
                                            labels.size(), it->labels.size()));
  }
  std::size_t i = 0;
  for (const std::string_view value : labels) {
    const LabelDef& l = it->labels[i++];
    if (!l.values.empty() && std::find(l.values.begin(), l.values.end(), value) == l.values.end()) {
      throw std::invalid_argument(fmt::format("metric {}: label {} = \"{}\" (expected one of: {})",
                                              name, l.name, value, fmt::join(l.values, ", ")));
    }
  }
  return static_cast<std::size_t>(it - catalogue_.begin());
}

MetricsWriter::Series& MetricsWriter::series(std::size_t metric, LabelValues labels) {
  return series_[metric][Key(labels.begin(), labels.end())];
}

void MetricsWriter::counter(std::string_view name, double value, LabelValues labels) {
  series(find(name, MetricType::Counter, labels), labels).value += value;
}

void MetricsWriter::gauge(std::string_view name, double value, LabelValues labels) {
  series(find(name, MetricType::Gauge, labels), labels).value += value;
}

void MetricsWriter::histogram(std::string_view name, const HistogramSnapshot& value,
                              LabelValues labels) {
  series(find(name, MetricType::Histogram, labels), labels).histogram += value;
}

double MetricsWriter::value(std::string_view name, LabelValues labels) const {
  const auto it = std::find_if(catalogue_.begin(), catalogue_.end(),
                               [&](const MetricDef& m) { return m.name == name; });
  if (it == catalogue_.end()) return 0;
  const auto& all = series_[static_cast<std::size_t>(it - catalogue_.begin())];
  const auto s = all.find(Key(labels.begin(), labels.end()));
  return s == all.end() ? 0 : s->second.value;
}

HistogramSnapshot MetricsWriter::histogramValue(std::string_view name, LabelValues labels) const {
  const auto it = std::find_if(catalogue_.begin(), catalogue_.end(),
                               [&](const MetricDef& m) { return m.name == name; });
  if (it == catalogue_.end()) return {};
  const auto& all = series_[static_cast<std::size_t>(it - catalogue_.begin())];
  const auto s = all.find(Key(labels.begin(), labels.end()));
  return s == all.end() ? HistogramSnapshot{} : s->second.histogram;
}

// ---- MetricsRegistry ---------------------------------------------------------------------------

struct MetricsRegistry::Registration::State {
  mutable std::mutex mutex;
  std::uint64_t nextId = 1;
  std::vector<std::pair<std::uint64_t, Collector>> collectors;
  std::vector<std::unique_ptr<AppMetric>> app;  // the application's, in the order made
};

MetricsRegistry::Registration::Registration(Registration&& other) noexcept
    : state_(std::move(other.state_)), id_(std::exchange(other.id_, 0)) {}

MetricsRegistry::Registration& MetricsRegistry::Registration::operator=(
    Registration&& other) noexcept {
  if (this != &other) {
    reset();
    state_ = std::move(other.state_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void MetricsRegistry::Registration::reset() noexcept {
  if (auto state = state_.lock()) {
    std::lock_guard lock(state->mutex);  // waits for a scrape running this collector
    std::erase_if(state->collectors, [this](const auto& c) { return c.first == id_; });
  }
  state_.reset();
  id_ = 0;
}

MetricsRegistry::MetricsRegistry() : state_(std::make_shared<Registration::State>()) {}
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::Registration MetricsRegistry::add(Collector collector) {
  if (!collector) throw std::invalid_argument("MetricsRegistry::add: empty collector");
  std::lock_guard lock(state_->mutex);
  const std::uint64_t id = state_->nextId++;
  state_->collectors.emplace_back(id, std::move(collector));
  return Registration(state_, id);
}

MetricsWriter MetricsRegistry::collect() const {
  MetricsWriter out;
  std::lock_guard lock(state_->mutex);
  for (const auto& [id, collector] : state_->collectors) {
    try {
      collector(out);
    } catch (const std::exception& e) {
      log(LogLevel::Error, "wheelbeat: metrics collector {} threw: {}", id, e.what());
    } catch (...) {
      log(LogLevel::Error, "wheelbeat: metrics collector {} threw", id);
    }
  }
  return out;
}

std::string MetricsRegistry::prometheusText() const {
  std::string text = collect().prometheusText();
  std::lock_guard lock(state_->mutex);
  for (const auto& metric : state_->app) metric->appendText(text);
  return text;
}

template <typename M>
M& MetricsRegistry::make(std::string_view name, std::string_view help,
                         std::initializer_list<std::string_view> labels, MetricType type) {
  std::vector<std::string> names(labels.begin(), labels.end());
  validateAppMetric(name, type, names);
  std::lock_guard lock(state_->mutex);
  for (const auto& existing : state_->app) {
    if (existing->name() != name) continue;
    if (existing->type() != type || existing->help() != help || existing->labelNames() != names) {
      throw std::invalid_argument(fmt::format(
          "metric {}: made before as a {} with help \"{}\" and labels ({}) (expected: the same "
          "type, help and labels)",
          name, metricTypeName(existing->type()), existing->help(),
          fmt::join(existing->labelNames(), ", ")));
    }
    return static_cast<M&>(*existing);
  }
  state_->app.push_back(
      std::make_unique<M>(std::string(name), std::string(help), std::move(names)));
  return static_cast<M&>(*state_->app.back());
}

Counter& MetricsRegistry::counter(std::string_view name, std::string_view help,
                                  std::initializer_list<std::string_view> labels) {
  return make<Counter>(name, help, labels, MetricType::Counter);
}

Gauge& MetricsRegistry::gauge(std::string_view name, std::string_view help,
                              std::initializer_list<std::string_view> labels) {
  return make<Gauge>(name, help, labels, MetricType::Gauge);
}

DurationHistogram& MetricsRegistry::histogram(std::string_view name, std::string_view help,
                                              std::initializer_list<std::string_view> labels) {
  return make<DurationHistogram>(name, help, labels, MetricType::Histogram);
}

}  // namespace wheelbeat::core
