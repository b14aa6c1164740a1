/// Turns screen rows into the bytes of one frame.
enum ScreenFrame {
    /// Cursor home, every content row followed by erase-to-end-of-line, the last row (the status
    /// line) padded to `columns` and, unless `colors` is `.none`, in reverse video.
    static func render(_ rows: [String], columns: Int, colors: ColorPolicy) -> String {
        var s = "\u{1B}[H"
        for (i, row) in rows.enumerated() {
            if i == rows.count - 1 {
                let pad = max(0, columns - DisplayWidth.of(row))
                s += colors == .none ? row + String(repeating: " ", count: pad)
                    : "\u{1B}[7m" + row + String(repeating: " ", count: pad) + "\u{1B}[0m"
            } else {
                s += row + "\u{1B}[K\r\n"
            }
        }
        return s
    }
}
