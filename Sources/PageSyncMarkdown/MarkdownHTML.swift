internal import CCmark
#if canImport(Glibc)
import Glibc
#endif

extension CmarkParser {
    /// `markdown` as an HTML fragment (cmark-gfm's renderer, with its table and strikethrough
    /// extensions) that can run nothing: raw HTML in the document is shown as the text it is
    /// (an HTML block as a code block, inline HTML as text), and cmark's safe mode (its default)
    /// empties link and image destinations with `javascript:`, `vbscript:`, `file:` and
    /// non-image `data:` URLs. What the follower page shows of a markdown room.
    public static func safeHTML(_ markdown: String) -> String {
        withDocument(Array(markdown.utf8)) { document in
            guard let document else { return "<pre>\(escapedHTML(markdown))</pre>\n" }
            var raw: [OpaquePointer] = []
            if let iterator = cmark_iter_new(document) {
                defer { cmark_iter_free(iterator) }
                while cmark_iter_next(iterator) != CMARK_EVENT_DONE {
                    if let node = cmark_iter_get_node(iterator) {
                        let type = cmark_node_get_type(node)
                        if type == CMARK_NODE_HTML_BLOCK || type == CMARK_NODE_HTML_INLINE { raw.append(node) }
                    }
                }
            }
            for node in raw {
                let block = cmark_node_get_type(node) == CMARK_NODE_HTML_BLOCK
                guard let text = cmark_node_new(block ? CMARK_NODE_CODE_BLOCK : CMARK_NODE_TEXT) else { continue }
                var literal = cmark_node_get_literal(node).map { String(cString: $0) } ?? ""
                if block, literal.hasSuffix("\n") == false { literal += "\n" }
                cmark_node_set_literal(text, literal)
                if cmark_node_replace(node, text) == 1 { cmark_node_free(node) } else { cmark_node_free(text) }
            }
            guard let html = cmark_render_html(document, CMARK_OPT_DEFAULT, nil) else { return "" }
            defer { free(html) }
            return String(cString: html)
        }
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` as character references.
    public static func escapedHTML(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
