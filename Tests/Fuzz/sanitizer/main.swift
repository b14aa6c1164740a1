// libFuzzer target: the pager's sanitizer on any document line. A document must never
// drive the terminal: only SGR (ESC [ digits ; : m) may pass through.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSanitizer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // The first byte picks the colour policy, so each execution renders the line once
    // (`sanitize` is `pieces` joined): three times fewer passes per input than trying all three.
    guard size >= 1 else { return 0 }
    let colors = [ColorPolicy.full, .noColor, .none][Int(data[0]) % 3]
    let line = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
        .split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ")
    check(Array(Sanitizer.sanitize(line, colors: colors).unicodeScalars), colors: colors)
    if colors == .none {
        // Plain text (search, copy) holds no escape at all.
        check(Array(Sanitizer.plainText(line).unicodeScalars), colors: .none)
    }
    return 0
}

/// Only SGR sequences and printable characters; under `.none` not even SGR.
func check(_ out: [Unicode.Scalar], colors: ColorPolicy) {
    var i = 0
    while i < out.count {
        let v = out[i].value
        if v == 0x1B {
            precondition(colors != .none, "an escape passed through under TERM=dumb")
            precondition(i + 1 < out.count && out[i + 1] == "[", "ESC not starting CSI")
            var j = i + 2
            while j < out.count, (0x30...0x39).contains(out[j].value) || out[j] == ";" || out[j] == ":" { j += 1 }
            precondition(j < out.count && out[j] == "m", "a CSI other than SGR passed through")
            i = j + 1
            continue
        }
        precondition(!(v < 0x20 || (0x7F...0x9F).contains(v)), "control character U+\(String(v, radix: 16)) passed through")
        i += 1
    }
}
