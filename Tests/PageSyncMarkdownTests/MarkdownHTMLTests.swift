import PageSyncMarkdown
import Testing

@Suite struct MarkdownHTMLTests {
    @Test func markdownBecomesHTML() {
        let html = CmarkParser.safeHTML("# Title\n\nSome *words* and a [link](https://example.org).\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
        #expect(html.contains("<h1>Title</h1>"))
        #expect(html.contains("<em>words</em>"))
        #expect(html.contains("<a href=\"https://example.org\">link</a>"))
        #expect(html.contains("<table>") && html.contains("<td>1</td>"), "GitHub tables: \(html)")
    }

    @Test func rawHTMLIsShownAsText() {
        let html = CmarkParser.safeHTML("<script>alert(1)</script>\n\nA <b>bold</b> <img src=x onerror=\"alert(2)\"> claim.\n")
        #expect(!html.contains("<script") && !html.contains("<b>") && !html.contains("<img"), "\(html)")
        #expect(html.contains("<pre><code>&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>"), "\(html)")
        #expect(html.contains("&lt;b&gt;bold&lt;/b&gt;"))
        #expect(html.contains("&lt;img src=x onerror=&quot;alert(2)&quot;&gt;"))
    }

    @Test func dangerousLinksAreEmptied() {
        let html = CmarkParser.safeHTML("[a](javascript:alert(1)) [b](vbscript:x) ![c](data:text/html;base64,PHNjcmlwdD4=) [d](JavaScript:alert(1))\n")
        #expect(!html.lowercased().contains("javascript:") && !html.contains("vbscript:") && !html.contains("data:text/html"), "\(html)")
    }

    @Test func escaping() {
        #expect(CmarkParser.escapedHTML("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&#39;")
    }
}
