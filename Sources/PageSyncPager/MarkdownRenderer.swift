import PageSyncMarkdown

/// Renders markdown as terminal lines: a pure function from a ``MarkdownBlock`` tree (or
/// markdown text, parsed with ``CmarkParser``) to lines with SGR styles.
///
/// What it looks like:
/// - headings bold (level 1 also underlined), levels 1 and 2 with a rule below (`═`, `─`);
/// - *emphasis* italic, **strong** bold, ~~strikethrough~~ struck, links underlined with
///   their address after them in `<…>`, images as `[image: alt] <address>`;
/// - `code` in cyan, code blocks indented by 4 and in yellow;
/// - block quotes behind `│ `, bullet lists with `•` (`◦`, `▪` when nested), numbered lists
///   with their numbers, continuation lines indented under the item's text;
/// - tables with their columns padded and aligned, cells separated by ` │ `, the header bold
///   above a `─┼─` rule; a table's lines are marked (``RenderedMarkdown/tableLines``) so the
///   pager chops them, rather than wraps them, on a screen narrower than the table;
/// - paragraphs keep their line breaks (the pager wraps long lines); one empty line between blocks.
///
/// Under ``ColorPolicy/noColor`` the same styles are written and the pager's sanitizer drops
/// the colours, so code spans keep their backticks. Under ``ColorPolicy/none`` (`TERM=dumb`)
/// no escape sequence is written at all: emphasis shows as `*x*`, strong as `**x**`,
/// strikethrough as `~~x~~`, code as `` `x` ``, and headings from level 3 keep their `#`s.
/// Every line returned is self-contained: a style opened in it is reset at its end.
public enum MarkdownRenderer {
    /// The rendered lines of `markdown`.
    public static func render(markdown: String, colors: ColorPolicy = .full) -> [String] {
        render(CmarkParser.parse(markdown), colors: colors)
    }

    /// The rendered lines of `blocks`.
    public static func render(_ blocks: [MarkdownBlock], colors: ColorPolicy = .full) -> [String] {
        Renderer(colors: colors).blocks(blocks, depth: 0).map(\.text)
    }

    /// The rendered lines of `markdown`, with which of them are a table's.
    public static func renderPage(markdown: String, colors: ColorPolicy = .full) -> RenderedMarkdown {
        let parsed = CmarkParser.parseWithLines(markdown)
        let renderer = Renderer(colors: colors)
        var lines: [Line] = []
        var blocks: [RenderedMarkdown.Block] = []
        for (i, item) in parsed.enumerated() {
            if i > 0 { lines.append(Line(text: "")) }
            let first = lines.count
            lines += renderer.block(item.block, depth: 0)
            let code: Bool = if case .code = item.block { true } else { false }
            blocks.append(RenderedMarkdown.Block(source: item.lines, rendered: first..<max(first + 1, lines.count), code: code))
        }
        return RenderedMarkdown(lines: lines.map(\.text), tableLines: Set(lines.indices.filter { lines[$0].table }),
                                blocks: blocks)
    }

    /// How wide a rule of `---` is.
    public static let ruleWidth = 40

    static let reset = "\u{1B}[0m"
}

/// A markdown page as the pager shows it: its lines, and which of them are a table's (chopped,
/// never wrapped, and scrolled sideways with ← →).
public struct RenderedMarkdown: Equatable, Sendable {
    /// The rendered lines.
    public var lines: [String]
    /// The indices of the lines that belong to a table.
    public var tableLines: Set<Int>
    /// The top-level blocks: the document lines each came from and the rendered lines it became.
    public var blocks: [Block] = []

    /// One top-level block of the page.
    public struct Block: Equatable, Sendable {
        /// Its document lines (from 1).
        public var source: ClosedRange<Int>
        /// Its rendered lines (indices into ``RenderedMarkdown/lines``).
        public var rendered: Range<Int>
        /// Whether it is a code block, whose lines render one for one (after a fence line).
        public var code: Bool
    }
}

/// One rendered line, and whether it is a table's.
private struct Line {
    var text: String
    var table = false

    /// The same line behind `prefix` (a quote's bar, a list item's indent).
    func prefixed(_ prefix: String) -> Line { Line(text: prefix + text, table: table) }
}

private struct Renderer {
    let colors: ColorPolicy
    var styled: Bool { colors != .none }

    func blocks(_ blocks: [MarkdownBlock], depth: Int, tight: Bool = false) -> [Line] {
        var out: [Line] = []
        for (i, block) in blocks.enumerated() {
            if i > 0 && !tight { out.append(Line(text: "")) }
            out += self.block(block, depth: depth)
        }
        return out
    }

    func block(_ block: MarkdownBlock, depth: Int) -> [Line] {
        plainBlock(block, depth: depth) ?? structured(block, depth: depth)
    }

    /// The blocks made of other blocks, whose lines keep their marks.
    private func structured(_ block: MarkdownBlock, depth: Int) -> [Line] {
        switch block {
        case .blockQuote(let inner):
            return blocks(inner, depth: depth).map { $0.text.isEmpty ? Line(text: "│") : $0.prefixed("│ ") }
        case .list(let ordered, let start, let tight, let items):
            var out: [Line] = []
            let bullets = ["•", "◦", "▪"]
            let widest = String(start + max(0, items.count - 1)).count
            for (i, item) in items.enumerated() {
                if i > 0 && !tight { out.append(Line(text: "")) }
                let marker = ordered
                    ? String(repeating: " ", count: widest - String(start + i).count) + "\(start + i). "
                    : bullets[min(depth, bullets.count - 1)] + " "
                let indent = String(repeating: " ", count: DisplayWidth.of(marker))
                let lines = blocks(item, depth: depth + 1, tight: tight)
                if lines.isEmpty { out.append(Line(text: marker)); continue }
                for (j, line) in lines.enumerated() {
                    out.append(j == 0 ? line.prefixed(marker) : (line.text.isEmpty ? Line(text: "") : line.prefixed(indent)))
                }
            }
            return out
        case .table(let alignments, let header, let rows):
            return table(alignments: alignments, header: header, rows: rows).map { Line(text: $0, table: true) }
        default:
            return []
        }
    }

    /// The blocks that are lines of text, or nil for one made of other blocks.
    private func plainBlock(_ block: MarkdownBlock, depth: Int) -> [Line]? {
        let lines: [String]
        switch block {
        case .heading(let level, let content):
            var style: [String] = []
            if styled { style = level == 1 ? ["\u{1B}[1;4m"] : ["\u{1B}[1m"] }
            var heading = inline(content, style: style)
            if !styled && level >= 3 { heading[0] = String(repeating: "#", count: level) + " " + heading[0] }
            if level <= 2 {
                let width = heading.map { DisplayWidth.of(Sanitizer.plainText($0)) }.max() ?? 0
                heading.append(String(repeating: level == 1 ? "═" : "─", count: max(1, width)))
            }
            lines = heading
        case .paragraph(let content):
            lines = inline(content)
        case .code(_, let code):
            let open = colors == .full ? "\u{1B}[33m" : ""
            lines = code.map { line in
                line.isEmpty ? "" : "    " + open + line + (open.isEmpty ? "" : MarkdownRenderer.reset)
            }
        case .html(let html):
            lines = html
        case .thematicBreak:
            lines = [String(repeating: "─", count: MarkdownRenderer.ruleWidth)]
        case .blockQuote, .list, .table:
            return nil
        }
        return lines.map { Line(text: $0) }
    }

    func table(alignments: [MarkdownAlignment], header: [[MarkdownInline]], rows: [[[MarkdownInline]]]) -> [String] {
        let columns = max(alignments.count, header.count, rows.map(\.count).max() ?? 0)
        func cells(_ row: [[MarkdownInline]], bold: Bool) -> [String] {
            (0..<columns).map { c in
                c < row.count ? inline(row[c], style: bold && styled ? ["\u{1B}[1m"] : [], oneLine: true)[0] : ""
            }
        }
        let head = cells(header, bold: true)
        let body = rows.map { cells($0, bold: false) }
        var widths = head.map { DisplayWidth.of(Sanitizer.plainText($0)) }
        for row in body {
            for (c, cell) in row.enumerated() { widths[c] = max(widths[c], DisplayWidth.of(Sanitizer.plainText(cell))) }
        }
        func line(_ row: [String]) -> String {
            var parts: [String] = []
            for (c, cell) in row.enumerated() {
                let gap = widths[c] - DisplayWidth.of(Sanitizer.plainText(cell))
                let alignment = c < alignments.count ? alignments[c] : .left
                let left = alignment == .right ? gap : alignment == .center ? gap / 2 : 0
                parts.append(String(repeating: " ", count: left) + cell + String(repeating: " ", count: gap - left))
            }
            var text = parts.joined(separator: " │ ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        var out: [String] = []
        if !header.isEmpty {
            out.append(line(head))
            out.append(widths.map { String(repeating: "─", count: $0) }.joined(separator: "─┼─"))
        }
        out += body.map(line)
        return out
    }

    /// Inline content as lines (split at line breaks), each line self-contained in its styles.
    /// `oneLine`: breaks become spaces (table cells).
    func inline(_ content: [MarkdownInline], style: [String] = [], oneLine: Bool = false) -> [String] {
        var writer = InlineWriter(styled: styled, stack: style)
        writer.lines = [style.joined()]
        writer.write(content, colors: colors, oneLine: oneLine)
        writer.finish()
        return writer.lines
    }
}

/// Writes inlines into lines, keeping a stack of open styles so a line break closes them and the
/// next line reopens them, and closing one style restores the ones around it.
private struct InlineWriter {
    let styled: Bool
    var stack: [String]
    var lines: [String] = [""]

    init(styled: Bool, stack: [String]) {
        self.styled = styled
        self.stack = stack
    }

    mutating func append(_ s: String) { lines[lines.count - 1] += s }

    mutating func newline() {
        if !stack.isEmpty { append(MarkdownRenderer.reset) }
        lines.append(stack.joined())
    }

    mutating func finish() {
        if !stack.isEmpty { append(MarkdownRenderer.reset) }
        stack = []
    }

    mutating func span(_ sgr: String, plainMark: String, _ body: (inout InlineWriter) -> Void) {
        guard styled else {
            append(plainMark)
            body(&self)
            append(plainMark)
            return
        }
        stack.append(sgr)
        append(sgr)
        body(&self)
        stack.removeLast()
        append(MarkdownRenderer.reset + stack.joined())
    }

    mutating func write(_ content: [MarkdownInline], colors: ColorPolicy, oneLine: Bool) {
        for item in content {
            switch item {
            case .text(let s), .html(let s): append(s)
            case .code(let s):
                if colors == .full { span("\u{1B}[36m", plainMark: "") { $0.append(s) } }
                else { append("`" + s + "`") }
            case .softBreak, .lineBreak:
                if oneLine { append(" ") } else { newline() }
            case .emphasis(let inner):
                span("\u{1B}[3m", plainMark: "*") { $0.write(inner, colors: colors, oneLine: oneLine) }
            case .strong(let inner):
                span("\u{1B}[1m", plainMark: "**") { $0.write(inner, colors: colors, oneLine: oneLine) }
            case .strikethrough(let inner):
                span("\u{1B}[9m", plainMark: "~~") { $0.write(inner, colors: colors, oneLine: oneLine) }
            case .link(let url, let inner):
                span("\u{1B}[4m", plainMark: "") { $0.write(inner, colors: colors, oneLine: oneLine) }
                let text = MarkdownRenderer.plain(inner)
                if !url.isEmpty && url != text && "mailto:" + text != url { append(" <\(url)>") }
            case .image(let url, let inner):
                append("[image: ")
                write(inner, colors: colors, oneLine: true)
                append("]")
                if !url.isEmpty { append(" <\(url)>") }
            }
        }
    }
}

extension MarkdownRenderer {
    /// The text of inlines without any styling (for comparing a link's text with its address).
    static func plain(_ content: [MarkdownInline]) -> String {
        var s = ""
        for item in content {
            switch item {
            case .text(let t), .code(let t), .html(let t): s += t
            case .softBreak, .lineBreak: s += " "
            case .emphasis(let i), .strong(let i), .strikethrough(let i), .link(_, let i), .image(_, let i): s += plain(i)
            }
        }
        return s
    }
}
