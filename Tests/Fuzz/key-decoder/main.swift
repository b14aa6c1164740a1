// libFuzzer target: the pager's key decoder on any terminal input, fed in pieces.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let step = Int(data[0] % 16) + 1
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    var whole = KeyDecoder()
    var expected = whole.feed(input)
    expected += whole.timeout()

    var pieces = KeyDecoder()
    var got: [Key] = []
    var offset = 0
    while offset < input.count {
        let end = min(input.count, offset + step)
        got += pieces.feed(input[offset..<end])
        precondition(pieces.bufferedByteCount <= KeyDecoder.maxSequenceLength, "buffered \(pieces.bufferedByteCount)")
        offset = end
    }
    got += pieces.timeout()
    precondition(pieces.bufferedByteCount == 0 || !pieces.needsTimeout, "a lone ESC survived the timeout")
    precondition(got == expected, "keys depend on how the input was cut")
    return 0
}
