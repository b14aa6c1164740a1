// libFuzzer target: WireLine parsing of any server line, and dot-stuffing round trips.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWireLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let line = WireLine(parsing: text) {
        _ = line.errorCode
        _ = line.text
        _ = line.version
        _ = line.startsMultilineReply
        _ = line.yesNo("wrap")
        _ = line.int("page")
        precondition(!line.head.isEmpty)
        precondition((line.kind == .other) == !["HELLO", "OK", "ERR", "PAGE", "BYE"].contains(line.head))
    }
    // Stuff the lines (control characters become spaces), then read them back.
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let encoded = String(decoding: Wire.multiline(header: "OK WHO 1", lines: lines), as: UTF8.self)
    var received = encoded.split(separator: "\n", omittingEmptySubsequences: false)
    precondition(received.removeFirst() == "OK WHO 1")
    precondition(received.removeLast() == "", "no final LF")
    var body: [String] = []
    var ended = false
    for line in received {
        precondition(!ended, "a line after the end marker")
        if let content = DotUnstuffer.unstuff(line) { body.append(String(content)) } else { ended = true }
    }
    precondition(ended, "no end marker")
    precondition(body == lines.map { ControlCharacters.replacingControls(String($0)) }, "round trip changed the lines")
    return 0
}
