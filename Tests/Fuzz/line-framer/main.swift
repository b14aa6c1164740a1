// libFuzzer target: LineFramer on any bytes, appended in pieces whose sizes come from
// the first input byte; the frames must not depend on how the input was cut.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineFramer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let maxLine = Int(data[0] % 64) + 1
    let step = Int(data[0] / 64) * 7 + 1
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    var whole = LineFramer(maxLineLength: maxLine)
    whole.append(contentsOf: input)
    var expected: [LineFramer.Frame] = []
    while let frame = whole.next() { expected.append(frame) }

    var pieces = LineFramer(maxLineLength: maxLine)
    var got: [LineFramer.Frame] = []
    var offset = 0
    while offset < input.count {
        let end = min(input.count, offset + step)
        input[offset..<end].withUnsafeBytes { pieces.append($0) }
        while let frame = pieces.next() { got.append(frame) }
        precondition(pieces.bufferedByteCount <= maxLine + step, "buffered \(pieces.bufferedByteCount)")
        offset = end
    }
    precondition(got == expected, "framing depends on how the input was cut")
    for frame in got {
        if case .line(let line) = frame {
            precondition(line.count <= maxLine, "line longer than the limit")
            precondition(!line.contains(0x0A), "LF inside a line")
        }
    }
    return 0
}
