// Escaping for renderings (src/report/markup.hpp): a string a report carries
// shows as written and can neither end the element it stands in nor format
// the text around it.
#include <doctest/doctest.h>

#include <string>

#include "report/markup.hpp"

using namespace bitproof;

TEST_SUITE("report") {
  TEST_CASE("md_text: Markdown and HTML inert, controls visible, harmless text as written") {
    CHECK(md_text("fold-lo≡plain: 6656/6656") == "fold-lo≡plain: 6656/6656");
    CHECK(md_text("half_bits((a + 14) << 10) gate[0][29] x > y a|b") == "half_bits((a + 14) << 10) gate[0][29] x > y a|b");
    CHECK(md_text("**Verdict: holds**") == "\\*\\*Verdict: holds\\*\\*");
    CHECK(md_text("</details><!--<b>") == "&lt;/details>&lt;!--&lt;b>");
    CHECK(md_text("[x](y) [r]: z ![i][j] _e_ __init `c` ~~d~~ \\") ==
          "[x\\](y) [r\\]: z ![i][j] \\_e\\_ \\_\\_init \\`c\\` \\~\\~d\\~\\~ \\\\");
    CHECK(md_text("] ends in ]") == "] ends in \\]");
    CHECK(md_text("ends in <") == "ends in &lt;");
    CHECK(md_text(std::string("e\x1B[2J\0x\n", 8)) == "e\\\\x1B[2J\\\\x00x\\\\x0A");
    CHECK(md_text("a\xE2\x80\xAE" "b") == "a\\\\u202Eb");
    CHECK(md_text("# head", true) == "\\# head");
    CHECK(md_text("> quote", true) == "\\> quote");
    CHECK(md_text("12. item", true) == "12\\. item");
    CHECK(md_text("- item", true) == "\\- item");
    CHECK(md_text("- item") == "- item");
    CHECK(md_cell("a|b") == "a\\|b");
  }

  TEST_CASE("md_code: a fence longer than any backtick run inside") {
    CHECK(md_code("0x3800") == "`0x3800`");
    CHECK(md_code("a`b") == "``a`b``");
    CHECK(md_code("`a``") == "``` `a`` ```");
    CHECK(md_code("x|y") == "`x|y`");
    CHECK(md_code("x|y", true) == "`x\\|y`");
    CHECK(md_code("ck\n## PASS") == "`ck\\x0A## PASS`");
  }

  TEST_CASE("md_fenced and html_text") {
    CHECK(md_fenced("bitproof prove a.json", "sh") == "```sh\nbitproof prove a.json\n```\n");
    CHECK(md_fenced("a\n```\nb", "sh") == "````sh\na\n```\nb\n````\n");
    CHECK(html_text("a<b & \"c\">\x1B") == "a&lt;b &amp; &quot;c&quot;&gt;\\x1B");
    CHECK(control_free("a\tb\x7F") == "a\\x09b\\x7F");
  }
}
