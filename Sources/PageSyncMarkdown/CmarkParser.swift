internal import CCmark
import Synchronization

/// Parses markdown with cmark-gfm (GitHub's CommonMark parser) and its table and strikethrough
/// extensions: into a ``MarkdownBlock`` tree (the pager renders it), or into the outline of its
/// top-level blocks with their lines (``MarkdownPagination`` splits a document with it). The only
/// code that touches CCmark; everything it returns is a plain value, and it keeps no state
/// between calls.
public enum CmarkParser {
    /// The blocks of `markdown` (CommonMark with GitHub tables and strikethrough; raw HTML is kept as text).
    public static func parse(_ markdown: String) -> [MarkdownBlock] {
        withDocument(Array(markdown.utf8)) { document in
            document.map(blocks(of:)) ?? [.paragraph([.text(markdown)])]
        }
    }

    /// The top-level blocks of `markdown`, each with the source lines it spans (numbered from 1,
    /// as ``outline(_:)`` numbers them): how the pager maps a document line onto rendered rows.
    public static func parseWithLines(_ markdown: String) -> [(block: MarkdownBlock, lines: ClosedRange<Int>)] {
        withDocument(Array(markdown.utf8)) { document in
            guard let document else { return [(.paragraph([.text(markdown)]), 1...1)] }
            return children(document).compactMap { node in
                let start = Int(cmark_node_get_start_line(node))
                let end = max(start, Int(cmark_node_get_end_line(node)))
                return block(node).map { ($0, start...end) }
            }
        }
    }

    /// The top-level blocks of `markdown` with the lines they span (numbered from 1, as cmark
    /// counts them: a line ends at LF, CR LF or a lone CR). Nil when cmark could not parse.
    public static func outline(_ markdown: some Collection<UInt8>) -> [MarkdownOutlineBlock]? {
        withDocument(Array(markdown)) { document in
            document.map { children($0).map(outlineBlock) }
        }
    }

    /// Runs `body` with the parsed document of `bytes` (nil when cmark could not make one), which
    /// is freed after. One parse at a time in the process: cmark-gfm 0.29 turns the extensions'
    /// characters (`~`, `|`) on in a table shared by every parser when a parse finishes, and off
    /// again after, so a parse on another thread could lose strikethrough half-way (seen once in
    /// the parallel test suite: `~~a~~` left as text).
    static func withDocument<T>(_ bytes: [UInt8], _ body: (OpaquePointer?) -> T) -> T {
        _ = registered
        return parsing.withLock { _ in
            guard let parser = cmark_parser_new(CMARK_OPT_DEFAULT) else { return body(nil) }
            defer { cmark_parser_free(parser) }
            for name in ["table", "strikethrough"] {
                if let ext = cmark_find_syntax_extension(name) { _ = cmark_parser_attach_syntax_extension(parser, ext) }
            }
            var bytes = bytes
            bytes.withUnsafeMutableBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    cmark_parser_feed(parser, chars.baseAddress, chars.count)
                }
            }
            let document = cmark_parser_finish(parser)
            defer { if let document { cmark_node_free(document) } }
            return body(document)
        }
    }

    private static let parsing = Mutex<Void>(())

    /// One top-level block as the outline gives it.
    private static func outlineBlock(_ node: OpaquePointer) -> MarkdownOutlineBlock {
        let kind: MarkdownOutlineBlock.Kind
        let start = Int(cmark_node_get_start_line(node))
        var end = Int(cmark_node_get_end_line(node))
        switch cmark_node_get_type(node) {
        case CMARK_NODE_THEMATIC_BREAK:
            kind = .thematicBreak
            end = start  // one line always (cmark counts the blank lines after it in)
        case CMARK_NODE_HEADING: kind = .heading(level: Int(cmark_node_get_heading_level(node)))
        case CMARK_NODE_HTML_BLOCK:
            let literal = string(cmark_node_get_literal(node))
            kind = MarkdownNotes.isNotes(literal) ? .notes
                : literal.utf8.count <= MarkdownOutlineBlock.maxHTMLLength ? .html(literal) : .other
            // cmark-gfm 0.29 ends an HTML block one line early when its last line closes it
            // (`-->`): its literal holds every line, so its lines are counted from there.
            let lines = literal.utf8.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } + (literal.utf8.last == 0x0A ? 0 : 1)
            end = max(end, start + lines - 1)
        default: kind = .other
        }
        return MarkdownOutlineBlock(kind: kind, startLine: start, endLine: end)
    }

    /// Registers the core extensions once (Swift runs a static initializer exactly once, thread-safely).
    private static let registered: Bool = {
        cmark_gfm_core_extensions_ensure_registered()
        return true
    }()

    private static func children(_ node: OpaquePointer) -> [OpaquePointer] {
        var out: [OpaquePointer] = []
        var child = cmark_node_first_child(node)
        while let c = child {
            out.append(c)
            child = cmark_node_next(c)
        }
        return out
    }

    private static func string(_ p: UnsafePointer<CChar>?) -> String {
        p.map { String(cString: $0) } ?? ""
    }

    private static func typeName(_ node: OpaquePointer) -> String {
        string(cmark_node_get_type_string(node))
    }

    private static func lines(_ literal: String) -> [String] {
        var text = literal
        if text.hasSuffix("\n") { text.removeLast() }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    private static func blocks(of node: OpaquePointer) -> [MarkdownBlock] {
        children(node).compactMap(block)
    }

    private static func block(_ node: OpaquePointer) -> MarkdownBlock? {
        switch cmark_node_get_type(node) {
        case CMARK_NODE_HEADING:
            return .heading(level: Int(cmark_node_get_heading_level(node)), inlines(of: node))
        case CMARK_NODE_PARAGRAPH:
            return .paragraph(inlines(of: node))
        case CMARK_NODE_BLOCK_QUOTE:
            return .blockQuote(blocks(of: node))
        case CMARK_NODE_LIST:
            return .list(ordered: cmark_node_get_list_type(node) == CMARK_ORDERED_LIST,
                         start: Int(cmark_node_get_list_start(node)), tight: cmark_node_get_list_tight(node) != 0,
                         items: children(node).map(blocks(of:)))
        case CMARK_NODE_CODE_BLOCK:
            return .code(info: string(cmark_node_get_fence_info(node)), lines: lines(string(cmark_node_get_literal(node))))
        case CMARK_NODE_HTML_BLOCK:
            return .html(lines: lines(string(cmark_node_get_literal(node))))
        case CMARK_NODE_THEMATIC_BREAK:
            return .thematicBreak
        default:
            // Tables are the one extension block asked for; anything else unknown is left out.
            return typeName(node) == "table" ? table(node) : nil
        }
    }

    private static func table(_ node: OpaquePointer) -> MarkdownBlock {
        let columns = Int(cmark_gfm_extensions_get_table_columns(node))
        var alignments: [MarkdownAlignment] = []
        if let raw = cmark_gfm_extensions_get_table_alignments(node) {
            for i in 0..<columns {
                switch raw[i] {
                case UInt8(ascii: "c"): alignments.append(.center)
                case UInt8(ascii: "r"): alignments.append(.right)
                default: alignments.append(.left)
                }
            }
        } else {
            alignments = Array(repeating: .left, count: columns)
        }
        var header: [[MarkdownInline]] = []
        var rows: [[[MarkdownInline]]] = []
        for row in children(node) where typeName(row) == "table_row" || typeName(row) == "table_header" {
            let cells = children(row).map(inlines(of:))
            if cmark_gfm_extensions_get_table_row_is_header(row) != 0 && header.isEmpty { header = cells }
            else { rows.append(cells) }
        }
        return .table(alignments: alignments, header: header, rows: rows)
    }

    private static func inlines(of node: OpaquePointer) -> [MarkdownInline] {
        children(node).compactMap(inline)
    }

    private static func inline(_ node: OpaquePointer) -> MarkdownInline? {
        switch cmark_node_get_type(node) {
        case CMARK_NODE_TEXT: return .text(string(cmark_node_get_literal(node)))
        case CMARK_NODE_CODE: return .code(string(cmark_node_get_literal(node)))
        case CMARK_NODE_SOFTBREAK: return .softBreak
        case CMARK_NODE_LINEBREAK: return .lineBreak
        case CMARK_NODE_EMPH: return .emphasis(inlines(of: node))
        case CMARK_NODE_STRONG: return .strong(inlines(of: node))
        case CMARK_NODE_LINK: return .link(url: string(cmark_node_get_url(node)), inlines(of: node))
        case CMARK_NODE_IMAGE: return .image(url: string(cmark_node_get_url(node)), inlines(of: node))
        case CMARK_NODE_HTML_INLINE: return .html(string(cmark_node_get_literal(node)))
        default:
            if typeName(node) == "strikethrough" { return .strikethrough(inlines(of: node)) }
            let literal = string(cmark_node_get_literal(node))  // an unknown inline: its text, if any
            return literal.isEmpty ? nil : .text(literal)
        }
    }
}
