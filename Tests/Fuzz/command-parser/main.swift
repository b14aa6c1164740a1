// libFuzzer target: CommandParser.parse on any bytes, the error line it produces, and
// CommandEncoder on every command it returns.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch CommandParser.parse(bytes) {
    case .success(let command):
        if case .ping(let text) = command { check(Wire.pong(text)) }
        // The encoder is the parser's inverse: what it writes for the command parses back to it.
        let encoded = CommandEncoder.bytes(command)
        precondition(encoded.last == 0x0A && !encoded.dropLast().contains(where: { $0 == 0x0A || $0 == 0x0D }), "not one line")
        precondition(CommandParser.parse(encoded.dropLast()) == .success(command), "encoder: \(command)")
    case .failure(let error):
        check(Wire.error(error))
        if error.closesConnection {
            precondition(bytes.first == 0x16 || error.message.contains("HTTP"), "closes for no reason: \(error)")
        }
    }
    return 0
}

/// One LF-terminated line, no control character but the final LF.
private func check(_ line: [UInt8]) {
    precondition(line.last == 0x0A, "no LF at the end")
    let text = String(decoding: line.dropLast(), as: UTF8.self)
    precondition(!text.unicodeScalars.contains(where: ControlCharacters.isControl), "control character in \(text.debugDescription)")
}
