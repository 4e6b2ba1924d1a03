// Tests of chrome_trace: the output parses as JSON (a small strict parser below), holds one
// event per begin/end with the documented fields, and the events of each thread nest.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "slinky/base/chrome_trace.h"

namespace slinky {
namespace {

// A JSON value; only what the tests look at is kept.
struct json {
  enum kind_t { null, boolean, number, string, array, object } kind = null;
  double num = 0;
  std::string str;
  std::vector<json> items;
  std::map<std::string, json> fields;
};

// A strict parser of RFC 8259 JSON; returns false on any syntax error.
class json_parser {
  const std::string& s_;
  std::size_t i_ = 0;

  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool literal(const char* word) {
    std::size_t n = std::string(word).size();
    if (s_.compare(i_, n, word) != 0) return false;
    i_ += n;
    return true;
  }
  bool parse_string(std::string& out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      unsigned char c = s_[i_++];
      if (c < 0x20) return false;
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (i_ >= s_.size()) return false;
      char e = s_[i_++];
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        if (i_ + 4 > s_.size()) return false;
        unsigned code = 0;
        for (int k = 0; k < 4; ++k) {
          char h = s_[i_++];
          if (!std::isxdigit(static_cast<unsigned char>(h))) return false;
          code = code * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
        }
        if (code >= 0x80) return false;  // Only ASCII escapes are expected here.
        out += static_cast<char>(code);
        break;
      }
      default: return false;
      }
    }
    if (i_ >= s_.size()) return false;
    ++i_;
    return true;
  }
  bool parse_number(double& out) {
    const std::size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
    if (s_[i_] == '0') {
      ++i_;
    } else {
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    out = std::strtod(s_.substr(start, i_ - start).c_str(), nullptr);
    return true;
  }
  bool parse_value(json& v) {
    skip_space();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') {
      v.kind = json::object;
      ++i_;
      skip_space();
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      for (;;) {
        skip_space();
        std::string key;
        if (!parse_string(key)) return false;
        skip_space();
        if (i_ >= s_.size() || s_[i_++] != ':') return false;
        if (v.fields.count(key)) return false;  // Duplicate keys are legal JSON but a bug here.
        if (!parse_value(v.fields[key])) return false;
        skip_space();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == '}') return ++i_, true;
        if (s_[i_++] != ',') return false;
      }
    }
    if (c == '[') {
      v.kind = json::array;
      ++i_;
      skip_space();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      for (;;) {
        v.items.emplace_back();
        if (!parse_value(v.items.back())) return false;
        skip_space();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == ']') return ++i_, true;
        if (s_[i_++] != ',') return false;
      }
    }
    if (c == '"') {
      v.kind = json::string;
      return parse_string(v.str);
    }
    if (literal("true") || literal("false")) {
      v.kind = json::boolean;
      return true;
    }
    if (literal("null")) return true;
    v.kind = json::number;
    return parse_number(v.num);
  }

public:
  explicit json_parser(const std::string& s) : s_(s) {}
  bool parse(json& v) {
    if (!parse_value(v)) return false;
    skip_space();
    return i_ == s_.size();
  }
};

bool parse_json(const std::string& s, json& v) { return json_parser(s).parse(v); }

TEST(chrome_trace, json_parser_rejects_bad_syntax) {
  json v;
  EXPECT_TRUE(parse_json("[{\"a\": 1, \"b\": [true, null, \"x\\\"\"]}, -2.5e3]", v));
  EXPECT_FALSE(parse_json("[{\"a\": 1,}]", v));
  EXPECT_FALSE(parse_json("[1, 2", v));
  EXPECT_FALSE(parse_json("[1 2]", v));
  EXPECT_FALSE(parse_json("[\"a\nb\"]", v));
  EXPECT_FALSE(parse_json("[01]", v));
  EXPECT_FALSE(parse_json("[,1]", v));
  EXPECT_FALSE(parse_json("[1]]", v));
}

// Checks that v is a trace: an array of complete duration events whose B/E events nest per
// thread, with non-decreasing times. Returns the events of each thread as "B name" / "E name".
std::map<int, std::vector<std::string>> check_trace(const json& v) {
  std::map<int, std::vector<std::string>> by_thread;
  std::map<int, std::vector<std::string>> open;
  std::map<int, double> last_ts, last_tts;
  EXPECT_EQ(v.kind, json::array);
  for (const json& e : v.items) {
    EXPECT_EQ(e.kind, json::object);
    const std::set<std::string> keys = {"name", "cat", "ph", "pid", "tid", "ts", "tts"};
    for (const auto& f : e.fields) EXPECT_EQ(keys.count(f.first), 1u) << f.first;
    for (const std::string& k : keys) {
      if (!e.fields.count(k)) {
        ADD_FAILURE() << "event without " << k;
        return by_thread;
      }
    }
    EXPECT_EQ(e.fields.at("cat").str, "slinky");
    EXPECT_EQ(e.fields.at("pid").num, 0);
    const std::string& ph = e.fields.at("ph").str;
    EXPECT_TRUE(ph == "B" || ph == "E") << ph;
    const double tid = e.fields.at("tid").num;
    EXPECT_GE(tid, 0);
    EXPECT_LT(tid, 1000);  // Small integers, not OS thread ids.
    EXPECT_EQ(tid, static_cast<int>(tid));
    const int t = static_cast<int>(tid);
    const double ts = e.fields.at("ts").num, tts = e.fields.at("tts").num;
    EXPECT_GE(ts, 0);
    if (last_ts.count(t)) {
      EXPECT_GE(ts, last_ts[t]);
      EXPECT_GE(tts, last_tts[t]);
    }
    last_ts[t] = ts;
    last_tts[t] = tts;
    const std::string& name = e.fields.at("name").str;
    by_thread[t].push_back(ph + " " + name);
    if (ph == "B") {
      open[t].push_back(name);
    } else {
      EXPECT_FALSE(open[t].empty()) << "end without begin: " << name;
      if (open[t].empty()) continue;
      EXPECT_EQ(open[t].back(), name);
      open[t].pop_back();
    }
  }
  for (const auto& o : open) EXPECT_TRUE(o.second.empty()) << "thread " << o.first << " left events open";
  return by_thread;
}

TEST(chrome_trace, empty_trace) {
  std::stringstream os;
  { chrome_trace t(os); }
  json v;
  ASSERT_TRUE(parse_json(os.str(), v)) << os.str();
  EXPECT_EQ(v.kind, json::array);
  EXPECT_TRUE(v.items.empty());
}

TEST(chrome_trace, nested_events_on_one_thread) {
  std::stringstream os;
  {
    chrome_trace t(os);
    t.begin("pipeline");
    {
      scoped_trace loop(&t, "loop y");
      scoped_trace call(&t, "a \"quoted\" \\ name\n");
    }
    scoped_trace none(nullptr, "ignored");
    t.end("pipeline");
  }
  json v;
  ASSERT_TRUE(parse_json(os.str(), v)) << os.str();
  std::map<int, std::vector<std::string>> events = check_trace(v);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events.begin()->second, (std::vector<std::string>{"B pipeline", "B loop y", "B a \"quoted\" \\ name\n",
                                                              "E a \"quoted\" \\ name\n", "E loop y", "E pipeline"}));
}

TEST(chrome_trace, threads_get_their_own_ids) {
  std::stringstream os;
  const int threads = 4;
  const int events = 200;
  {
    chrome_trace t(os);
    std::vector<std::thread> workers;
    for (int w = 0; w < threads; ++w) {
      workers.emplace_back([&]() {
        for (int i = 0; i < events; ++i) {
          scoped_trace outer(&t, "outer");
          scoped_trace inner(&t, "inner");
        }
      });
    }
    for (std::thread& w : workers) w.join();
  }
  json v;
  ASSERT_TRUE(parse_json(os.str(), v));
  EXPECT_EQ(v.items.size(), static_cast<std::size_t>(threads * events * 4));
  std::map<int, std::vector<std::string>> by_thread = check_trace(v);
  EXPECT_EQ(by_thread.size(), static_cast<std::size_t>(threads));
  for (const auto& t : by_thread) EXPECT_EQ(t.second.size(), static_cast<std::size_t>(events * 4));
}

TEST(chrome_trace, cpu_time_advances) {
  std::stringstream os;
  {
    chrome_trace t(os);
    t.begin("spin");
    // About 5 ms of CPU time.
    volatile double x = 0;
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(5)) x = x + 1;
    t.end("spin");
  }
  json v;
  ASSERT_TRUE(parse_json(os.str(), v));
  ASSERT_EQ(v.items.size(), 2u);
  const double wall = v.items[1].fields.at("ts").num - v.items[0].fields.at("ts").num;
  const double cpu = v.items[1].fields.at("tts").num - v.items[0].fields.at("tts").num;
  EXPECT_GE(wall, 4000);
  EXPECT_GT(cpu, 0);
  EXPECT_LE(cpu, wall + 1000);
}

TEST(chrome_trace, global_from_environment) {
  // ctest runs this alone with SLINKY_TRACE set (check_trace_json.cmake), and with the rest
  // without it.
  const char* path = std::getenv("SLINKY_TRACE");
  chrome_trace* t = chrome_trace::global();
  EXPECT_EQ(t, chrome_trace::global());
  if (!path || !*path) {
    EXPECT_EQ(t, nullptr);
    scoped_trace nothing("nothing");
    return;
  }
  ASSERT_NE(t, nullptr);
  scoped_trace outer("global outer");
  std::thread other([]() { scoped_trace inner("global \"other\" thread"); });
  other.join();
}

}  // namespace
}  // namespace slinky
