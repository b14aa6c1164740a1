import PageSyncCore

/// `-N` (as less's): the document's own line numbers before the page's lines. A page's lines
/// are numbered as the file numbers them (`TEXT`'s `firstline=`: line 1 of page 2 of a file
/// split every 40 lines is 41); the room's line, page-relative on the wire, is shown the same way.
package enum LineNumbers {
    /// The gutter's width for a page whose last file line is `lastLine` (unknown: as less, 7).
    package static func width(lastLine: Int?) -> Int {
        guard let lastLine else { return 8 }
        return max(4, String(lastLine).count) + 1
    }

    /// The gutter for one row: the number right-aligned, then a space; blank for a row that
    /// continues a line (wrapped, or a markdown block's later rendered lines).
    package static func gutter(_ number: Int?, width: Int) -> String {
        guard let number else { return String(repeating: " ", count: width) }
        let text = String(number)
        return String(repeating: " ", count: max(0, width - 1 - text.count)) + text + " "
    }
}

extension PagerModel {
    /// The file line the page on screen starts on (`firstline=`; 1 from a daemon that does not say).
    var fileFirstLine: Int {
        guard let key = displayKey else { return 1 }
        return fileFirstLines[key] ?? 1
    }

    /// The number gutter's width, or 0 when line numbers are off.
    var numberGutterWidth: Int {
        guard lineNumbers, !showingHelp, let key = displayKey else { return 0 }
        let count = texts[key].map { SourceLineCount.of($0) } ?? shownWindow?.lineCount
        return LineNumbers.width(lastLine: count.map { fileFirstLine + max(0, $0 - 1) })
    }

    /// The number for each visible row: a row that starts a document line gets its file line.
    mutating func rowNumbers(_ rows: ArraySlice<LayoutRow>) -> [Int?] {
        let map = sourceLines()
        var previous: Int?
        if let first = rows.first, first.line > 0 { previous = map.source(ofShown: first.line - 1) }
        return rows.map { row in
            let source = map.source(ofShown: row.line)
            defer { previous = source }
            guard row.isLineStart, source != previous else { return nil }
            return fileFirstLine + source - 1
        }
    }

    /// Remembers the file line page `key` starts on.
    mutating func rememberFirstLine(_ header: WireLine, for key: PageKey) {
        guard let line = header.int("firstline"), line >= 1 else { return }
        if fileFirstLines.count >= 256 { fileFirstLines.removeAll() }
        fileFirstLines[key] = line
    }

    /// `-N`: line numbers on or off.
    mutating func toggleLineNumbers() {
        let top = topLine()
        lineNumbers.toggle()
        restoreTop(line: top)
        message = lineNumbers ? "line numbers: the file's (the room's line \(room?.line ?? 1) is file line \(fileFirstLine + (room?.line ?? 1) - 1) here)"
            : "line numbers off"
    }
}

/// The number of document lines of a page's text as held (its lines).
enum SourceLineCount {
    static func of(_ lines: [String]) -> Int { lines.count }
}
